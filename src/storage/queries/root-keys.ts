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

/**
 * Finds a root key stored under any of these hashes (the stored forms of one secret, in
 * order of preference), revoked or not; one indexed lookup per hash, in one statement.
 */
export async function rootKeyFindByHashes(
  q: Queryable,
  hashes: readonly string[],
): Promise<RootKeyRow | undefined> {
  const rows = await q.query<RootKeyRow>(
    `select ${COLUMNS}
     from root_keys
     where hash = any($1::text[])
     order by array_position($1::text[], hash)
     limit 1`,
    [hashes],
  );
  return rows[0];
}

/** Stores a root key's hash in another form; false when it is no longer stored under `from`. */
export async function rootKeyRehash(
  q: Queryable,
  id: string,
  from: string,
  to: string,
): Promise<boolean> {
  const rows = await q.query(
    `update root_keys
     set hash = $3
     where id = $1
       and hash = $2
     returning id`,
    [id, from, to],
  );
  return rows.length === 1;
}

/**
 * Retires the root keys that earlier versions stored for the environment's ROOT_KEY: those
 * stored under `hash` (its plain SHA-256), and those the start-up bootstrap created under
 * the name ROOT_KEY (from an earlier value of it). Live ones are revoked; each loses its
 * start, and a live one its hash too (replaced by a value derived from nothing secret).
 * A revoked one keeps its hash, so a revoked ROOT_KEY stays refused. Returns what changed.
 */
export async function rootKeyRetireEnvironmentRows(
  q: Queryable,
  hash: string,
  now: number,
): Promise<{ id: string; workspaceId: string; wasLive: boolean; matches: boolean }[]> {
  return q.query(
    `update root_keys r
     set revoked_at = coalesce(r.revoked_at, $2),
       start = '',
       hash = case when r.revoked_at is null then 'retired:' || r.id else r.hash end
     from root_keys old
     where old.id = r.id
       and (old.start <> '' or old.revoked_at is null)
       and old.hash not like 'retired:%'
       and (old.hash = $1
         or (old.name = 'ROOT_KEY'
           and exists (
             select 1
             from audit_logs a
             where a.resource_id = old.id
               and a.event = 'rootKey.create'
               and a.actor_id = 'bootstrap')))
     returning r.id, r.workspace_id as "workspaceId", old.revoked_at is null as "wasLive",
       old.hash = $1 as matches`,
    [hash, now],
  );
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
