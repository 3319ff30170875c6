import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  SetRolePermissionsRequest,
  SetRolePermissionsResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { distinct } from "../../domain/distinct.js";
import type { PermissionRow } from "../../storage/queries/permissions.js";
import {
  type RoleRow,
  roleAddPermissions,
  roleFindById,
  roleRemovePermissions,
} from "../../storage/queries/roles.js";
import { authorize, beforeCreating } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { type Change, mutate } from "../mutation.js";
import { permissionsByRole, requireRole } from "./find-role.js";
import { ensurePermissions, missingSlugs } from "./slugs.js";
import { toPermissionMessage } from "./view.js";

/**
 * Replaces the permissions of a role by the given slugs (missing ones are created; []
 * removes all). Repeating the same request changes and audits nothing. Creating a permission
 * needs rbac.*.create_permission, checked again where it would be created (403, rolled back).
 */
export async function setRolePermissions(
  deps: Deps,
  req: SetRolePermissionsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof SetRolePermissionsResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const role = requireRole(await roleFindById(deps.db, workspaceId, req.roleId));
  const slugs = distinct(req.permissions);
  const missing = await missingSlugs(deps.db, workspaceId, slugs);
  authorize(ctx, {}, missing.length > 0 ? ["createPermissions"] : []);
  // A permission that existed at that check may be deleted before the transaction creates it.
  const mayCreate = beforeCreating(ctx, {}, "createPermissions");
  const final = await mutate(deps, ctx, async (tx, change) => {
    // Locked: concurrent replacements of one role's permissions take turns, so the role ends
    // with one caller's set, never a mix of two; a concurrent delete turns into a 404 here.
    requireRole(await roleFindById(tx, workspaceId, role.id, true));
    const desired = await ensurePermissions(tx, change, workspaceId, slugs, mayCreate);
    const current = (await permissionsByRole(tx, [role.id])).get(role.id) ?? [];
    const wanted = new Set(desired.map((p) => p.id));
    const had = new Set(current.map((p) => p.id));
    const add = desired.filter((p) => !had.has(p.id));
    const remove = current.filter((p) => !wanted.has(p.id));
    await roleAddPermissions(
      tx,
      workspaceId,
      role.id,
      add.map((p) => p.id),
      change.now,
    );
    await roleRemovePermissions(
      tx,
      role.id,
      remove.map((p) => p.id),
    );
    auditLinks(change, role, add, remove);
    if (add.length > 0 || remove.length > 0) change.invalidate({ kind: "rbac", workspaceId });
    return desired;
  });
  return { data: final.map(toPermissionMessage) };
}

/** An audit record per permission linked to or unlinked from a role. */
function auditLinks(
  change: Change,
  role: RoleRow,
  added: readonly PermissionRow[],
  removed: readonly PermissionRow[],
): void {
  for (const [event, list, verb] of [
    ["authorization.connect_role_and_permission", added, "Connected"],
    ["authorization.disconnect_role_and_permissions", removed, "Disconnected"],
  ] as const) {
    for (const p of list) {
      change.audit({
        event,
        resourceType: "role",
        resourceId: role.id,
        description: `${verb} role ${role.name} and permission ${p.slug}.`,
      });
    }
  }
}
