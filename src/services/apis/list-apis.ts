import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { ListApisRequest, ListApisResponseSchema } from "../../../gen/latchkey/v2/apis_pb.js";
import { apiList } from "../../storage/queries/apis.js";
import { authorizeRows } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { pageSize, toPage } from "../pagination.js";
import { toApiMessage } from "./view.js";

/**
 * One page of the live APIs of the workspace that the root key may read, by id. A key with
 * per-API grants lists only those APIs; one that may read none is 403.
 */
export async function listApis(
  deps: Deps,
  req: ListApisRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListApisResponseSchema>> {
  const readable = authorizeRows(ctx, "apiId");
  const limit = pageSize(req.limit);
  const rows = await apiList(deps.db, principalOf(ctx).workspaceId, {
    cursor: req.cursor,
    limit: limit + 1,
    ids: readable === "all" ? null : readable,
  });
  const { items, pagination } = toPage(rows, limit);
  return { data: items.map(toApiMessage), pagination };
}
