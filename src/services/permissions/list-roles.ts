import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ListRolesRequest,
  ListRolesResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { roleList } from "../../storage/queries/roles.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { pageSize, searchTerm, toPage } from "../pagination.js";
import { permissionsByRole } from "./find-role.js";
import { toRoleMessage } from "./view.js";

/** One page of the roles of the workspace, by id, each with its permissions. */
export async function listRoles(
  deps: Deps,
  req: ListRolesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListRolesResponseSchema>> {
  authorize(ctx);
  const limit = pageSize(req.limit);
  const rows = await roleList(deps.db, principalOf(ctx).workspaceId, {
    cursor: req.cursor,
    limit: limit + 1,
    search: searchTerm(req.search),
  });
  const { items, pagination } = toPage(rows, limit);
  const permissions = await permissionsByRole(
    deps.db,
    items.map((r) => r.id),
  );
  return { data: items.map((r) => toRoleMessage(r, permissions.get(r.id) ?? [])), pagination };
}
