import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { ListKeysRequest, ListKeysResponseSchema } from "../../../gen/latchkey/v2/apis_pb.js";
import { errors } from "../../errors/service-error.js";
import { identityFind } from "../../storage/queries/identities.js";
import { keyRecordsByIds } from "../../storage/queries/key-records.js";
import { keyIdsPage } from "../../storage/queries/keys.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { RECOVERABLE_UNSUPPORTED } from "../keys/find-key.js";
import { toKeyMessage } from "../keys/record.js";
import { pageSize, toPage } from "../pagination.js";
import { findApi } from "./find-api.js";

/**
 * One page of an API's live keys by id (keyset pagination: any page costs the same),
 * optionally only those of the identity with an externalId.
 */
export async function listKeys(
  deps: Deps,
  req: ListKeysRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListKeysResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const api = await findApi(deps, workspaceId, req.apiId);
  authorize(ctx, { apiId: api.id });
  if (req.decrypt) throw errors.preconditionFailed(RECOVERABLE_UNSUPPORTED);
  let identityId: string | undefined;
  if (req.externalId !== undefined) {
    const identity = await identityFind(deps.db, workspaceId, { externalId: req.externalId });
    if (!identity) return { data: [], pagination: { hasMore: false } };
    identityId = identity.id;
  }
  const limit = pageSize(req.limit);
  const ids = await keyIdsPage(deps.db, api.id, {
    cursor: req.cursor,
    limit: limit + 1,
    identityId,
  });
  const { items, pagination } = toPage(
    ids.map((id) => ({ id })),
    limit,
  );
  const records = await keyRecordsByIds(
    deps.db,
    workspaceId,
    items.map((i) => i.id),
  );
  const now = deps.clock.now();
  return { data: records.map((r) => toKeyMessage(r, now)), pagination };
}
