import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeletePermissionRequest,
  DeletePermissionResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { errors } from "../../errors/service-error.js";
import { permissionDelete, permissionFind } from "../../storage/queries/permissions.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";

/** Deletes a permission (by id or slug) with its links to roles and keys. */
export async function deletePermission(
  deps: Deps,
  req: DeletePermissionRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof DeletePermissionResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const permission = await permissionFind(deps.db, workspaceId, req.permission);
  if (!permission) throw errors.permissionNotFound();
  authorize(ctx);
  await mutate(deps, ctx, async (tx, change) => {
    if (!(await permissionDelete(tx, permission.id))) throw errors.permissionNotFound();
    change.audit({
      event: "permission.delete",
      resourceType: "permission",
      resourceId: permission.id,
      description: `Deleted permission ${permission.slug}.`,
    });
    change.invalidate({ kind: "rbac", workspaceId });
  });
  return { data: {} };
}
