import type { Queryable } from "../db.js";

/** A root key as stored: only the hash of the secret and its displayable start. */
export interface RootKeyRow {
  id: string;
  workspaceId: string;
  hash: string;
  start: string;
  name: string | null;
  permissions: string[];
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

const COLUMNS = `id, workspace_id as "workspaceId", hash, start, name, permissions,
  created_at as "createdAt", expires_at as "expiresAt", revoked_at as "revokedAt"`;

/** Inserts a root key; returns false when a key with the same hash exists already. */
export async function rootKeyInsert(q: Queryable, k: RootKeyRow): Promise<boolean> {
  const rows = await q.query(
    `insert into root_keys (id, workspace_id, hash, start, name, permissions, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict (hash) do nothing
     returning id`,
    [k.id, k.workspaceId, k.hash, k.start, k.name, k.permissions, k.createdAt, k.expiresAt],
  );
  return rows.length === 1;
}

/** Finds a root key by the hash of its secret, revoked or not; the caller judges its state. */
export async function rootKeyFindByHash(
  q: Queryable,
  hash: string,
): Promise<RootKeyRow | undefined> {
  const rows = await q.query<RootKeyRow>(
    `select ${COLUMNS}
     from root_keys
     where hash = $1`,
    [hash],
  );
  return rows[0];
}

/** Lists root keys, optionally of one workspace, by id. */
export async function rootKeyList(q: Queryable, workspaceId?: string): Promise<RootKeyRow[]> {
  return q.query<RootKeyRow>(
    `select ${COLUMNS}
     from root_keys
     where ($1::text is null or workspace_id = $1)
     order by workspace_id, id`,
    [workspaceId ?? null],
  );
}

/** Counts root keys ever created, revoked or not. */
export async function rootKeyCount(q: Queryable): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `select count(*)::int as n
     from root_keys`,
  );
  return rows[0]?.n ?? 0;
}

/** Revokes a live root key; returns its workspace, or undefined when none was live. */
export async function rootKeyRevoke(
  q: Queryable,
  id: string,
  now: number,
): Promise<{ workspaceId: string } | undefined> {
  const rows = await q.query<{ workspaceId: string }>(
    `update root_keys
     set revoked_at = $2
     where id = $1
       and revoked_at is null
     returning workspace_id as "workspaceId"`,
    [id, now],
  );
  return rows[0];
}
