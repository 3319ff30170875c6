import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import type { PermissionRow } from "../../storage/queries/permissions.js";
import { type RoleRow, rolePermissions } from "../../storage/queries/roles.js";

/** Throws 404 role_not_found when a lookup found nothing. */
export function requireRole(role: RoleRow | undefined): RoleRow {
  if (!role) throw errors.roleNotFound();
  return role;
}

/** The permissions of each of these roles, by role id, sorted by slug. */
export async function permissionsByRole(
  q: Queryable,
  roleIds: readonly string[],
): Promise<Map<string, PermissionRow[]>> {
  const byRole = new Map<string, PermissionRow[]>(roleIds.map((id) => [id, []]));
  for (const row of await rolePermissions(q, roleIds)) byRole.get(row.roleId)?.push(row);
  return byRole;
}
