import type { Queryable } from "../db.js";

/** An API as stored. */
export interface ApiRow {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
}

/** Inserts an API. */
export async function apiInsert(q: Queryable, api: ApiRow): Promise<void> {
  await q.query(
    `insert into apis (id, workspace_id, name, created_at)
     values ($1, $2, $3, $4)`,
    [api.id, api.workspaceId, api.name, api.createdAt],
  );
}

/**
 * Finds a live API of a workspace. Another workspace's API is indistinguishable from none.
 * `lock` share-locks it for the rest of the transaction: a deletion waits for the
 * transaction to commit, and a lookup that waited on a deletion finds nothing.
 */
export async function apiFindById(
  q: Queryable,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<ApiRow | undefined> {
  const rows = await q.query<ApiRow>(
    `select id, workspace_id as "workspaceId", name, created_at as "createdAt"
     from apis
     where workspace_id = $1
       and id = $2
       and deleted_at is null
     ${lock ? "for share" : ""}`,
    [workspaceId, id],
  );
  return rows[0];
}

/** Soft-deletes a live API; returns false when there was none to delete. */
export async function apiSoftDelete(
  q: Queryable,
  workspaceId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const rows = await q.query(
    `update apis
     set deleted_at = $3
     where workspace_id = $1
       and id = $2
       and deleted_at is null
     returning id`,
    [workspaceId, id, now],
  );
  return rows.length === 1;
}
