import { slices } from "../batches.js";
import type { Queryable } from "../db.js";
import { findByIdOrName } from "./by-id-or-name.js";

/** A permission as stored. */
export interface PermissionRow {
  id: string;
  workspaceId: string;
  name: string;
  slug: string;
  description: string | null;
  createdAt: number;
}

const COLUMNS = `id, workspace_id as "workspaceId", name, slug, description, created_at as "createdAt"`;

/** Inserts a permission; a taken slug raises a unique violation. */
export async function permissionInsert(q: Queryable, p: PermissionRow): Promise<void> {
  await q.query(
    `insert into permissions (id, workspace_id, name, slug, description, created_at)
     values ($1, $2, $3, $4, $5, $6)`,
    [p.id, p.workspaceId, p.name, p.slug, p.description, p.createdAt],
  );
}

/** Finds a permission of the workspace by id, else by slug. */
export function permissionFind(
  q: Queryable,
  workspaceId: string,
  idOrSlug: string,
): Promise<PermissionRow | undefined> {
  return findByIdOrName<PermissionRow>(q, "permissions", COLUMNS, workspaceId, idOrSlug);
}

/**
 * The permissions of the workspace with these slugs. `lock` locks them against deletion (key
 * share) for the rest of the transaction, so that a grant of them cannot name a permission
 * deleted meanwhile; one deleted while this waited is not returned.
 */
export function permissionsBySlugs(
  q: Queryable,
  workspaceId: string,
  slugs: readonly string[],
  lock = false,
): Promise<PermissionRow[]> {
  if (slugs.length === 0) return Promise.resolve([]);
  return q.query<PermissionRow>(
    `select ${COLUMNS}
     from permissions
     where workspace_id = $1
       and slug = any($2::text[])
     order by slug
     ${lock ? "for key share" : ""}`,
    [workspaceId, slugs],
  );
}

/**
 * Creates the permissions among `slugs` that do not exist (named after their slug), safely
 * when others create the same ones at once; returns the ones this call created, in the order
 * of `missing`.
 * A slice of rows per statement, in slug order, so that two callers creating overlapping
 * sets wait on each other's rows in the same order instead of deadlocking.
 */
export async function permissionsCreateMissing(
  q: Queryable,
  workspaceId: string,
  missing: readonly { id: string; slug: string }[],
  now: number,
): Promise<PermissionRow[]> {
  const sorted = [...missing].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  const created: PermissionRow[] = [];
  for (const part of slices(sorted)) {
    const rows = await q.query<PermissionRow>(
      `insert into permissions (id, workspace_id, name, slug, description, created_at)
       select id, $1, slug, slug, 'Auto-created permission: ' || slug, $2
       from unnest($3::text[], $4::text[]) with ordinality as t(id, slug, n)
       order by n
       on conflict (workspace_id, slug) do nothing
       returning ${COLUMNS}`,
      [workspaceId, now, part.map((m) => m.id), part.map((m) => m.slug)],
    );
    created.push(...rows);
  }
  const bySlug = new Map(created.map((p) => [p.slug, p]));
  return missing.flatMap((m) => bySlug.get(m.slug) ?? []);
}

/** Lists permissions by id from `cursor` (inclusive), optionally filtered by a search term. */
export function permissionList(
  q: Queryable,
  workspaceId: string,
  opts: { cursor: string | undefined; limit: number; search: string | undefined },
): Promise<PermissionRow[]> {
  return q.query<PermissionRow>(
    `select ${COLUMNS}
     from permissions
     where workspace_id = $1
       and id >= coalesce($2::text, '')
       and ($3::text is null
         or strpos(lower(id), $3) > 0
         or strpos(lower(name), $3) > 0
         or strpos(lower(slug), $3) > 0
         or strpos(lower(coalesce(description, '')), $3) > 0)
     order by id
     limit $4`,
    [workspaceId, opts.cursor ?? null, opts.search?.toLowerCase() ?? null, opts.limit],
  );
}

/** Deletes a permission and (by cascade) its links to roles and keys. */
export async function permissionDelete(q: Queryable, id: string): Promise<boolean> {
  const rows = await q.query(
    `delete from permissions
     where id = $1
     returning id`,
    [id],
  );
  return rows.length === 1;
}
