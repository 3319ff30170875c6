import type { Queryable } from "../db.js";

/** A console session as stored: the hash of its cookie's secret, never the secret. */
export interface ConsoleSessionRow {
  id: string;
  rootKeyId: string;
  workspaceId: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

/** A session with the current state of its root key (null fields: the key has no row). */
export interface ConsoleSessionWithKey extends ConsoleSessionRow {
  keyPermissions: string[] | null;
  keyRevokedAt: number | null;
  keyExpiresAt: number | null;
  keyFound: boolean;
}

/**
 * Inserts a session for a root key and, in the same transaction, deletes that root key's
 * sessions that have expired (idle since `idleBefore` or past their lifetime) and those beyond
 * the newest `keep` by last use, so one root key never holds more than `keep` rows.
 */
export async function consoleSessionInsert(
  tx: Queryable,
  s: ConsoleSessionRow,
  idleBefore: number,
  keep: number,
): Promise<void> {
  await tx.query(
    `delete from console_sessions
     where root_key_id = $1
       and (last_seen_at <= $2 or expires_at <= $3)`,
    [s.rootKeyId, idleBefore, s.createdAt],
  );
  await tx.query(
    `insert into console_sessions (id, root_key_id, workspace_id, created_at, last_seen_at, expires_at)
     values ($1, $2, $3, $4, $5, $6)`,
    [s.id, s.rootKeyId, s.workspaceId, s.createdAt, s.lastSeenAt, s.expiresAt],
  );
  // The new session is always kept (a tie in last use must not end the session just made),
  // with the newest `keep - 1` of the others.
  await tx.query(
    `delete from console_sessions
     where root_key_id = $1
       and id <> $2
       and id not in (
         select id
         from console_sessions
         where root_key_id = $1
           and id <> $2
         order by last_seen_at desc, created_at desc, id
         limit $3)`,
    [s.rootKeyId, s.id, keep - 1],
  );
}

/** A session by the hash of its secret, with its root key's current row (one indexed read). */
export async function consoleSessionFind(
  q: Queryable,
  id: string,
): Promise<ConsoleSessionWithKey | undefined> {
  const rows = await q.query<ConsoleSessionWithKey>(
    `select s.id, s.root_key_id as "rootKeyId", s.workspace_id as "workspaceId",
       s.created_at as "createdAt", s.last_seen_at as "lastSeenAt", s.expires_at as "expiresAt",
       r.permissions as "keyPermissions", r.revoked_at as "keyRevokedAt",
       r.expires_at as "keyExpiresAt", r.id is not null as "keyFound"
     from console_sessions s
     left join root_keys r
       on r.id = s.root_key_id
       and r.workspace_id = s.workspace_id
     where s.id = $1`,
    [id],
  );
  return rows[0];
}

/** Moves a session's last use forward (never back: two nodes may touch it at once). */
export async function consoleSessionTouch(q: Queryable, id: string, now: number): Promise<void> {
  await q.query(
    `update console_sessions
     set last_seen_at = $2
     where id = $1
       and last_seen_at < $2`,
    [id, now],
  );
}

/** Deletes a session; answers whether it was there. */
export async function consoleSessionDelete(q: Queryable, id: string): Promise<boolean> {
  const rows = await q.query(
    `delete from console_sessions
     where id = $1
     returning id`,
    [id],
  );
  return rows.length === 1;
}

/** Deletes up to `limit` ended sessions (last used at or before `idleBefore`, or past their lifetime). */
export async function consoleSessionDeleteExpired(
  q: Queryable,
  idleBefore: number,
  now: number,
  limit: number,
): Promise<number> {
  const rows = await q.query(
    `delete from console_sessions
     where id in (
       select id
       from console_sessions
       where last_seen_at <= $1
         or expires_at <= $2
       limit $3)
     returning id`,
    [idleBefore, now, limit],
  );
  return rows.length;
}
