import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ListPermissionsRequest,
  ListPermissionsResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { permissionList } from "../../storage/queries/permissions.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { pageSize, searchTerm, toPage } from "../pagination.js";
import { toPermissionMessage } from "./view.js";

/** One page of the permissions of the workspace, by id. */
export async function listPermissions(
  deps: Deps,
  req: ListPermissionsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListPermissionsResponseSchema>> {
  authorize(ctx);
  const limit = pageSize(req.limit);
  const rows = await permissionList(deps.db, principalOf(ctx).workspaceId, {
    cursor: req.cursor,
    limit: limit + 1,
    search: searchTerm(req.search),
  });
  const { items, pagination } = toPage(rows, limit);
  return { data: items.map(toPermissionMessage), pagination };
}
