import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteRoleRequest,
  DeleteRoleResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { errors } from "../../errors/service-error.js";
import { roleDelete, roleFind } from "../../storage/queries/roles.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { requireRole } from "./find-role.js";

/** Deletes a role (by id or name) with its links to permissions and keys. */
export async function deleteRole(
  deps: Deps,
  req: DeleteRoleRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof DeleteRoleResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const role = requireRole(await roleFind(deps.db, workspaceId, req.role));
  authorize(ctx);
  await mutate(deps, ctx, async (tx, change) => {
    if (!(await roleDelete(tx, role.id))) throw errors.roleNotFound();
    change.audit({
      event: "role.delete",
      resourceType: "role",
      resourceId: role.id,
      description: `Deleted role ${role.name}.`,
    });
    change.invalidate({ kind: "rbac", workspaceId });
  });
  return { data: {} };
}
