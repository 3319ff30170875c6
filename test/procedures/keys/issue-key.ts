import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CreateKeyRequest, CreateKeyRequestSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import type { TestServer } from "../../harness/server.js";
import type { Api } from "../../harness/typed.js";

/** A keys.createKey body as an object literal; without an apiId the key goes to a new API. */
export type NewKey = Exclude<MessageInitShape<typeof CreateKeyRequestSchema>, CreateKeyRequest>;

/**
 * Issues a key through the typed client, as `api` (the all-powerful root key unless given),
 * for tests of the procedures that act on keys.
 */
export async function issueKey(
  s: TestServer,
  body: NewKey = {},
  api: Api = s.api,
): Promise<{ keyId: string; key: string; apiId: string }> {
  const apiId = body.apiId || (await s.seed.api());
  const { data } = await api.keys.createKey({ ...body, apiId });
  if (!data) throw new Error("keys.createKey answered without data");
  return { keyId: data.keyId, key: data.key, apiId };
}
