import { slices } from "../batches.js";
import type { Queryable } from "../db.js";
import type { PermissionRow } from "./permissions.js";
import type { RoleRow } from "./roles.js";

/**
 * The permissions granted to a key directly (not through roles), by slug. `lock` holds them
 * against deletion (key share) for the rest of the transaction, so they can be granted again.
 */
export function keyDirectPermissions(
  q: Queryable,
  keyId: string,
  lock = false,
): Promise<PermissionRow[]> {
  return q.query<PermissionRow>(
    `select p.id, p.workspace_id as "workspaceId", p.name, p.slug, p.description,
       p.created_at as "createdAt"
     from keys_permissions kp
     join permissions p on p.id = kp.permission_id
     where kp.key_id = $1
     order by p.slug
     ${lock ? "for key share of p" : ""}`,
    [keyId],
  );
}

/** Grants permissions to a key directly (existing grants are kept), a slice per statement. */
export async function keyGrantPermissions(
  q: Queryable,
  workspaceId: string,
  keyId: string,
  permissionIds: readonly string[],
  now: number,
): Promise<void> {
  for (const ids of slices(permissionIds)) {
    await q.query(
      `insert into keys_permissions (key_id, permission_id, workspace_id, created_at)
       select $1, permission_id, $3, $4
       from unnest($2::text[]) as t(permission_id)
       on conflict do nothing`,
      [keyId, ids, workspaceId, now],
    );
  }
}

/** Takes direct permissions from a key. */
export async function keyRevokePermissions(
  q: Queryable,
  keyId: string,
  permissionIds: readonly string[],
): Promise<void> {
  if (permissionIds.length === 0) return;
  await q.query(
    `delete from keys_permissions
     where key_id = $1
       and permission_id = any($2::text[])`,
    [keyId, permissionIds],
  );
}

/**
 * The roles of a key, by name. `lock` holds them against deletion (key share) for the rest
 * of the transaction, so they can be granted again.
 */
export function keyRoles(q: Queryable, keyId: string, lock = false): Promise<RoleRow[]> {
  return q.query<RoleRow>(
    `select r.id, r.workspace_id as "workspaceId", r.name, r.description, r.created_at as "createdAt"
     from keys_roles kr
     join roles r on r.id = kr.role_id
     where kr.key_id = $1
     order by r.name
     ${lock ? "for key share of r" : ""}`,
    [keyId],
  );
}

/** Grants roles to a key (existing grants are kept), a slice per statement. */
export async function keyGrantRoles(
  q: Queryable,
  workspaceId: string,
  keyId: string,
  roleIds: readonly string[],
  now: number,
): Promise<void> {
  for (const ids of slices(roleIds)) {
    await q.query(
      `insert into keys_roles (key_id, role_id, workspace_id, created_at)
       select $1, role_id, $3, $4
       from unnest($2::text[]) as t(role_id)
       on conflict do nothing`,
      [keyId, ids, workspaceId, now],
    );
  }
}

/** Takes roles from a key. */
export async function keyRevokeRoles(
  q: Queryable,
  keyId: string,
  roleIds: readonly string[],
): Promise<void> {
  if (roleIds.length === 0) return;
  await q.query(
    `delete from keys_roles
     where key_id = $1
       and role_id = any($2::text[])`,
    [keyId, roleIds],
  );
}

/**
 * The roles of the workspace with these names, locked against deletion (key share) for the
 * rest of the transaction, so that a grant of them cannot name a role deleted meanwhile.
 */
export function rolesByNames(
  q: Queryable,
  workspaceId: string,
  names: readonly string[],
): Promise<RoleRow[]> {
  if (names.length === 0) return Promise.resolve([]);
  return q.query<RoleRow>(
    `select id, workspace_id as "workspaceId", name, description, created_at as "createdAt"
     from roles
     where workspace_id = $1
       and name = any($2::text[])
     order by name
     for key share`,
    [workspaceId, names],
  );
}
