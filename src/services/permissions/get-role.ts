import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  GetRoleRequest,
  GetRoleResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { roleFind } from "../../storage/queries/roles.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { permissionsByRole, requireRole } from "./find-role.js";
import { toRoleMessage } from "./view.js";

/** Returns a role named by id or name, with its permissions. */
export async function getRole(
  deps: Deps,
  req: GetRoleRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetRoleResponseSchema>> {
  const role = requireRole(await roleFind(deps.db, principalOf(ctx).workspaceId, req.role));
  authorize(ctx);
  const permissions = (await permissionsByRole(deps.db, [role.id])).get(role.id) ?? [];
  return { data: toRoleMessage(role, permissions) };
}
