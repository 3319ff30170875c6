import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { GetKeyRequest, GetKeyResponseSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { errors } from "../../errors/service-error.js";
import { keyRecordsByIds } from "../../storage/queries/key-records.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { RECOVERABLE_UNSUPPORTED } from "./find-key.js";
import { toKeyMessage } from "./record.js";

/** Returns the record of a key of the caller's workspace. */
export async function getKey(
  deps: Deps,
  req: GetKeyRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetKeyResponseSchema>> {
  const [record] = await keyRecordsByIds(deps.db, principalOf(ctx).workspaceId, [req.keyId]);
  if (!record) throw errors.keyNotFound();
  authorize(ctx, { apiId: record.apiId });
  if (req.decrypt) throw errors.preconditionFailed(RECOVERABLE_UNSUPPORTED);
  return { data: toKeyMessage(record, deps.clock.now()) };
}
