import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  SetRolePermissionsRequest,
  SetRolePermissionsResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import {
  roleAddPermissions,
  roleFindById,
  roleRemovePermissions,
} from "../../storage/queries/roles.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { type Change, mutate } from "../mutation.js";
import { permissionsByRole, requireRole } from "./find-role.js";
import { distinctSlugs, ensurePermissions, missingSlugs } from "./slugs.js";
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
  const slugs = distinctSlugs(req.permissions);
  const missing = await missingSlugs(deps.db, workspaceId, slugs);
  authorize(ctx, {}, missing.length > 0 ? ["createPermissions"] : []);
  const final = await mutate(deps, ctx, async (tx, change) => {
    // Locked: concurrent replacements of one role's permissions apply one after the other,
    // each diffing against what the previous left, and a deleted role is 404 here.
    requireRole(await roleFindById(tx, workspaceId, role.id, true));
    // A permission deleted since the check above would be created: that needs the grant.
    const desired = await ensurePermissions(tx, change, workspaceId, slugs, () =>
      authorize(ctx, {}, ["createPermissions"]),
    );
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

/** Audits each permission connected to and disconnected from the role. */
function auditLinks(
  change: Change,
  role: { id: string; name: string },
  add: readonly { slug: string }[],
  remove: readonly { slug: string }[],
): void {
  for (const [event, list, verb] of [
    ["authorization.connect_role_and_permission", add, "Connected"],
    ["authorization.disconnect_role_and_permissions", remove, "Disconnected"],
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
