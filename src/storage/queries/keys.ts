import type { JsonObject } from "@bufbuild/protobuf";
import type { Queryable } from "../db.js";

/** A key as stored. Only the hash of the secret and its displayable start are kept. */
export interface KeyRow {
  id: string;
  workspaceId: string;
  apiId: string;
  hash: string;
  start: string;
  prefix: string | null;
  byteLength: number | null;
  name: string | null;
  identityId: string | null;
  meta: JsonObject | null;
  expiresAt: number | null;
  enabled: boolean;
  remaining: number | null;
  refillAmount: number | null;
  refillDay: number | null;
  lastRefillAt: number | null;
  /** The key whose balance this key spends (set on a rerolled key). */
  creditsKeyId: string | null;
  migrationId: string | null;
  createdAt: number;
  updatedAt: number | null;
  /** The network ranges the key verifies from; null for none (its API's then apply). */
  allowedCidrs: string[] | null;
}

const COLUMNS = `k.id, k.workspace_id as "workspaceId", k.api_id as "apiId", k.hash, k.start, k.prefix,
  k.byte_length as "byteLength", k.name, k.identity_id as "identityId", k.meta,
  k.expires_at as "expiresAt", k.enabled, k.remaining, k.refill_amount as "refillAmount",
  k.refill_day as "refillDay", k.last_refill_at as "lastRefillAt", k.credits_key_id as "creditsKeyId",
  k.migration_id as "migrationId", k.created_at as "createdAt", k.updated_at as "updatedAt",
  k.allowed_cidrs as "allowedCidrs"`;

const json = (v: JsonObject | null) => (v ? JSON.stringify(v) : null);

/** Inserts a key; returns false (and writes nothing) when its workspace has its hash already. */
export async function keyInsert(q: Queryable, k: KeyRow): Promise<boolean> {
  const rows = await q.query(
    `insert into keys (id, workspace_id, api_id, hash, start, prefix, byte_length, name, identity_id,
       meta, expires_at, enabled, remaining, refill_amount, refill_day, last_refill_at,
       credits_key_id, migration_id, created_at, allowed_cidrs)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text::jsonb, $11, $12, $13, $14, $15, $16,
       $17, $18, $19, $20::text[])
     on conflict (workspace_id, hash) do nothing
     returning id`,
    [
      k.id,
      k.workspaceId,
      k.apiId,
      k.hash,
      k.start,
      k.prefix,
      k.byteLength,
      k.name,
      k.identityId,
      json(k.meta),
      k.expiresAt,
      k.enabled,
      k.remaining,
      k.refillAmount,
      k.refillDay,
      k.lastRefillAt,
      k.creditsKeyId,
      k.migrationId,
      k.createdAt,
      k.allowedCidrs,
    ],
  );
  return rows.length === 1;
}

/**
 * Finds a live key of a live API in the workspace. `lock` takes a row lock for the rest
 * of the transaction, so read-modify-write updates of one key serialise.
 */
export async function keyFind(
  q: Queryable,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<KeyRow | undefined> {
  const rows = await q.query<KeyRow>(
    `select ${COLUMNS}
     from keys k
     join apis a on a.id = k.api_id
     where k.workspace_id = $1
       and k.id = $2
       and k.deleted_at is null
       and a.deleted_at is null
     ${lock ? "for update of k" : ""}`,
    [workspaceId, id],
  );
  return rows[0];
}

/** Writes every mutable setting of a key (read it with `keyFind(..., lock)` first). */
export async function keyWrite(q: Queryable, k: KeyRow): Promise<void> {
  await q.query(
    `update keys
     set name = $2,
         identity_id = $3,
         meta = $4::text::jsonb,
         expires_at = $5,
         enabled = $6,
         remaining = $7,
         refill_amount = $8,
         refill_day = $9,
         last_refill_at = $10,
         credits_key_id = $11,
         updated_at = $12,
         allowed_cidrs = $13::text[]
     where id = $1`,
    [
      k.id,
      k.name,
      k.identityId,
      json(k.meta),
      k.expiresAt,
      k.enabled,
      k.remaining,
      k.refillAmount,
      k.refillDay,
      k.lastRefillAt,
      k.creditsKeyId,
      k.updatedAt,
      k.allowedCidrs,
    ],
  );
}

/** A key that spends another key's balance: what an invalidation of its record needs. */
export interface CreditDependent {
  id: string;
  workspaceId: string;
  apiId: string;
  hash: string;
}

/**
 * Of the keys in `rows`, those that can still verify at `now` (live, not expired):
 * the only ones whose cached records can answer with a balance. Rerolled keys keep their
 * pointer after their grace period, so a key rotated daily gathers hundreds of expired ones
 * over a year; naming them all would send that many invalidations to every node on every
 * change of its balance. Updating an expired key's expiry invalidates it by itself.
 */
const verifiableIn = (rows: string, now: string) =>
  `select id, workspace_id as "workspaceId", api_id as "apiId", hash
   from ${rows}
   where deleted_at is null and (expires_at is null or expires_at >= ${now})`;

/** The columns `verifiableIn` reads, for the statements that return the rows they change. */
const TOUCHED = "id, workspace_id, api_id, hash, deleted_at, expires_at";

/** The keys that spend `holderId`'s balance and can still verify at `now`. */
export async function keyCreditDependents(
  q: Queryable,
  holderId: string,
  now: number,
): Promise<CreditDependent[]> {
  return q.query<CreditDependent>(`${verifiableIn("keys", "$2")} and credits_key_id = $1`, [
    holderId,
    now,
  ]);
}

/**
 * Points every key that spends `from`'s balance at `to` instead (a reroll moves the
 * balance); returns those of them that can still verify at `now`.
 */
export async function keyMoveCreditsPointers(
  q: Queryable,
  from: string,
  to: string,
  now: number,
): Promise<CreditDependent[]> {
  return q.query<CreditDependent>(
    `with moved as (
       update keys
       set credits_key_id = $2
       where credits_key_id = $1
       returning ${TOUCHED}
     )
     ${verifiableIn("moved", "$3")}`,
    [from, to, now],
  );
}

/** Marks a live key deleted; returns false when it was not live. */
export async function keySoftDelete(q: Queryable, id: string, now: number): Promise<boolean> {
  const rows = await q.query(
    `update keys
     set deleted_at = $2
     where id = $1
       and deleted_at is null
     returning id`,
    [id, now],
  );
  return rows.length === 1;
}

/** Removes a key with its links and rate limits (by cascade). */
export async function keyHardDelete(q: Queryable, id: string): Promise<boolean> {
  const rows = await q.query(
    `delete from keys
     where id = $1
     returning id`,
    [id],
  );
  return rows.length === 1;
}

/**
 * The hashes among `hashes` that some key of the workspace (deleted ones included) already
 * has. Keys of other workspaces are not looked at: their hashes are none of this one's business.
 */
export async function keysExistingHashes(
  q: Queryable,
  workspaceId: string,
  hashes: readonly string[],
): Promise<string[]> {
  if (hashes.length === 0) return [];
  const rows = await q.query<{ hash: string }>(
    `select hash
     from keys
     where workspace_id = $1
       and hash = any($2::text[])`,
    [workspaceId, hashes],
  );
  return rows.map((r) => r.hash);
}

/** One page of the ids of an API's live keys, by id from `cursor` (inclusive). */
export async function keyIdsPage(
  q: Queryable,
  apiId: string,
  opts: { cursor: string | undefined; limit: number; identityId: string | undefined },
): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    `select id
     from keys
     where api_id = $1
       and deleted_at is null
       and id >= coalesce($2::text, '')
       and ($3::text is null or identity_id = $3)
     order by id
     limit $4`,
    [apiId, opts.cursor ?? null, opts.identityId ?? null, opts.limit],
  );
  return rows.map((r) => r.id);
}

/** Finds a key by id whatever its state (a rerolled key's balance holder may be deleted), locked. */
export async function keyFindForUpdate(q: Queryable, id: string): Promise<KeyRow | undefined> {
  const rows = await q.query<KeyRow>(
    `select ${COLUMNS}
     from keys k
     where k.id = $1
     for update`,
    [id],
  );
  return rows[0];
}

/**
 * Gives every key that spends `holder`'s balance its own copy of it (before `holder` goes);
 * returns those of them that can still verify at `now`. Each copy is a balance its key did
 * not hold before: the same statement records it in the credit ledger as adjusted.
 */
export async function keyCopyCreditsToDependents(
  q: Queryable,
  holder: KeyRow,
  now: number,
): Promise<CreditDependent[]> {
  return q.query<CreditDependent>(
    `with copied as (
       update keys
       set remaining = $2,
           refill_amount = $3,
           refill_day = $4,
           last_refill_at = $5,
           credits_key_id = null
       where credits_key_id = $1
       returning ${TOUCHED}
     ),
     ledger as (
       insert into credit_ledger (workspace_id, subject_id, at, spent, refilled, adjusted)
       select workspace_id, id, $6, 0, 0, $2::bigint
       from copied
       where $2::bigint is not null and $2::bigint <> 0
     )
     ${verifiableIn("copied", "$6")}`,
    [holder.id, holder.remaining, holder.refillAmount, holder.refillDay, holder.lastRefillAt, now],
  );
}

/**
 * Moves keys' `last_used_at` forward to these times (never back). The rows are locked in id
 * order first, the order a pooled spend locks the balances of several keys in: an update in
 * whatever order the plan visits them could hold one key a spend waits for while waiting for
 * another that spend holds (a deadlock, which failed the verifications of the batch).
 */
export async function keysTouch(
  q: Queryable,
  uses: readonly { id: string; time: number }[],
): Promise<void> {
  if (uses.length === 0) return;
  await q.query(
    `with due as (
       select k.id, u.time
       from keys k
       join jsonb_to_recordset($1::text::jsonb) as u(id text, time bigint) on u.id = k.id
       where k.last_used_at is null or k.last_used_at < u.time
       order by k.id
       for update of k
     )
     update keys k
     set last_used_at = due.time
     from due
     where k.id = due.id`,
    [JSON.stringify(uses)],
  );
}
