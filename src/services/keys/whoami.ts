import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { WhoamiRequest, WhoamiResponseSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { hashKey } from "../../domain/key-material.js";
import { errors } from "../../errors/service-error.js";
import { keyRecordByHashes } from "../../storage/queries/key-records.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { toKeyMessage } from "./record.js";

/** Returns the record of the key whose secret is given, if it is a key of the caller's workspace. */
export async function whoami(
  deps: Deps,
  req: WhoamiRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof WhoamiResponseSchema>> {
  // Read fresh, not through the verification cache, under every form the key may be stored
  // in, and only in the caller's workspace: the same secret may be a key of another one too.
  const hashes = deps.config.keyHashing.candidates(req.key, hashKey(req.key));
  const { workspaceId } = principalOf(ctx);
  const record = (await keyRecordByHashes(deps.db, { workspaceId }, hashes))?.record;
  if (!record) throw errors.keyNotFound();
  authorize(ctx, { apiId: record.apiId });
  return { data: toKeyMessage(record, deps.clock.now()) };
}
