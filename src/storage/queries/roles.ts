import { slices } from "../batches.js";
import type { Queryable } from "../db.js";
import { findByIdOrName } from "./by-id-or-name.js";
import type { PermissionRow } from "./permissions.js";

/** A role as stored. */
export interface RoleRow {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  createdAt: number;
}

const COLUMNS = `id, workspace_id as "workspaceId", name, description, created_at as "createdAt"`;

/** Inserts a role; a taken name raises a unique violation. */
export async function roleInsert(q: Queryable, r: RoleRow): Promise<void> {
  await q.query(
    `insert into roles (id, workspace_id, name, description, created_at)
     values ($1, $2, $3, $4, $5)`,
    [r.id, r.workspaceId, r.name, r.description, r.createdAt],
  );
}

/** Finds a role of the workspace by id, else by name. */
export function roleFind(
  q: Queryable,
  workspaceId: string,
  idOrName: string,
): Promise<RoleRow | undefined> {
  return findByIdOrName<RoleRow>(q, "roles", COLUMNS, workspaceId, idOrName);
}

/**
 * Finds a role of the workspace by id only. `lock` holds the row until the transaction ends
 * against other changes of the role and its deletion, not against keys taking the role.
 */
export async function roleFindById(
  q: Queryable,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<RoleRow | undefined> {
  const rows = await q.query<RoleRow>(
    `select ${COLUMNS}
     from roles
     where workspace_id = $1
       and id = $2
     ${lock ? "for no key update" : ""}`,
    [workspaceId, id],
  );
  return rows[0];
}

/** Lists roles by id from `cursor` (inclusive), optionally filtered by a search term. */
export function roleList(
  q: Queryable,
  workspaceId: string,
  opts: { cursor: string | undefined; limit: number; search: string | undefined },
): Promise<RoleRow[]> {
  return q.query<RoleRow>(
    `select ${COLUMNS}
     from roles
     where workspace_id = $1
       and id >= coalesce($2::text, '')
       and ($3::text is null
         or strpos(lower(id), $3) > 0
         or strpos(lower(name), $3) > 0
         or strpos(lower(coalesce(description, '')), $3) > 0)
     order by id
     limit $4`,
    [workspaceId, opts.cursor ?? null, opts.search?.toLowerCase() ?? null, opts.limit],
  );
}

/** Deletes a role and (by cascade) its links to permissions and keys. */
export async function roleDelete(q: Queryable, id: string): Promise<boolean> {
  const rows = await q.query(
    `delete from roles
     where id = $1
     returning id`,
    [id],
  );
  return rows.length === 1;
}

/** The permissions of some roles, sorted by slug within each role. */
export function rolePermissions(
  q: Queryable,
  roleIds: readonly string[],
): Promise<(PermissionRow & { roleId: string })[]> {
  if (roleIds.length === 0) return Promise.resolve([]);
  return q.query<PermissionRow & { roleId: string }>(
    `select rp.role_id as "roleId", p.id, p.workspace_id as "workspaceId", p.name, p.slug,
       p.description, p.created_at as "createdAt"
     from roles_permissions rp
     join permissions p on p.id = rp.permission_id
     where rp.role_id = any($1::text[])
     order by rp.role_id, p.slug`,
    [roleIds],
  );
}

/** Links permissions to a role (existing links are kept), a slice per statement. */
export async function roleAddPermissions(
  q: Queryable,
  workspaceId: string,
  roleId: string,
  permissionIds: readonly string[],
  now: number,
): Promise<void> {
  for (const ids of slices(permissionIds)) {
    await q.query(
      `insert into roles_permissions (role_id, permission_id, workspace_id, created_at)
       select $1, permission_id, $3, $4
       from unnest($2::text[]) as t(permission_id)
       on conflict do nothing`,
      [roleId, ids, workspaceId, now],
    );
  }
}

/** Unlinks permissions from a role. */
export async function roleRemovePermissions(
  q: Queryable,
  roleId: string,
  permissionIds: readonly string[],
): Promise<void> {
  if (permissionIds.length === 0) return;
  await q.query(
    `delete from roles_permissions
     where role_id = $1
       and permission_id = any($2::text[])`,
    [roleId, permissionIds],
  );
}
