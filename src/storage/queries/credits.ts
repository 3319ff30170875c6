import type { CreditState } from "../../domain/credits.js";
import type { Queryable } from "../db.js";

/** What one coalesced spend found and did. */
export interface BatchSpend {
  /** False when the key row is gone (deleted for good). */
  found: boolean;
  /** True for a key without a credit limit (nothing is spent). */
  unlimited: boolean;
  /** The balance before the batch, with a due refill applied. */
  before: number;
  /**
   * The key now holding this key's balance, when it was moved (a reroll committed after the
   * caller read where the balance was): nothing was spent, spend from that key instead.
   */
  movedTo: string | null;
}

/**
 * Spends a batch of costs from one key's balance in ONE statement. The row is locked and
 * read at its latest committed version (FOR UPDATE re-reads a row changed concurrently),
 * a due refill is applied (the boundary of the key's own refill_day is picked from
 * `$3`, see refillBoundaries), and the costs are taken one after the other, each if the
 * balance left covers it (the rule of `spendInOrder`, which the caller applies to `before`
 * to answer each spend). The same statement appends the batch's one ledger entry at `now`
 * (what it took and refilled, when either is not 0): no round trip more, and the entry
 * commits exactly when the balance does. The update commits with the statement, before
 * anyone is answered.
 */
export async function creditsSpendBatch(
  q: Queryable,
  keyId: string,
  costs: readonly number[],
  boundaries: readonly number[],
  now: number,
): Promise<BatchSpend> {
  const rows = await q.query<{
    unlimited: boolean;
    before: number | null;
    movedTo: string | null;
  }>(
    `with locked as (
       select id, workspace_id, remaining, refill_amount, last_refill_at, credits_key_id,
         ($3::bigint[])[coalesce(refill_day, 0) + 1] as boundary
       from keys
       where id = $1
       for update
     ),
     due as (
       select id, workspace_id, remaining, boundary, credits_key_id,
         refill_amount is not null and remaining is not null
           and coalesce(last_refill_at, -1) < boundary as refill,
         refill_amount
       from locked
     ),
     state as (
       select id, workspace_id, remaining, remaining is null as unlimited, refill, boundary,
         credits_key_id,
         case when refill then greatest(remaining, refill_amount) else remaining end as before
       from due
     ),
     -- One step per cost, in order: taken if the balance left covers it, else skipped.
     walk as materialized (
       with recursive step(i, left_) as (
         select 0, before from state where not unlimited
         union all
         select i + 1,
           case when ($2::bigint[])[i + 1] <= left_ then left_ - ($2::bigint[])[i + 1] else left_ end
         from step
         where i < cardinality($2::bigint[])
       )
       select left_ from step order by i desc limit 1
     ),
     plan as (
       select id, workspace_id, remaining, unlimited, refill, boundary, before, credits_key_id,
         case when unlimited then 0 else before - (select left_ from walk) end as taken
       from state
     ),
     spent as (
       update keys k
       set remaining = plan.before - plan.taken,
           last_refill_at = case when plan.refill then plan.boundary else k.last_refill_at end
       from plan
       where k.id = plan.id
         and not plan.unlimited
         and (plan.taken > 0 or plan.refill)
       returning k.id
     ),
     ledger as (
       insert into credit_ledger (workspace_id, subject_id, at, spent, refilled, adjusted)
       select workspace_id, id, $4, taken, before - remaining, 0
       from plan
       where not unlimited
         and (taken > 0 or before > remaining)
     )
     select unlimited, before, credits_key_id as "movedTo"
     from plan`,
    [keyId, costs, boundaries, now],
  );
  const row = rows[0];
  if (!row) return { found: false, unlimited: false, before: 0, movedTo: null };
  return {
    found: true,
    unlimited: row.unlimited,
    before: row.before ?? 0,
    movedTo: row.movedTo,
  };
}

/** The balance a key spends, as locked for a pooled spend. */
export interface LockedHolder extends CreditState {
  /** The verified key. */
  keyId: string;
  /** The key holding its balance: itself, or the key it was rerolled into. */
  holderId: string;
  /** Set when the holder itself was rerolled meanwhile: its balance is now there. */
  movedTo: string | null;
}

/**
 * Locks the balances these keys spend (each key's own, or the key it was rerolled into), in
 * holder id order so that concurrent spends lock them in one order; keys deleted for good
 * are missing from the answer. A row is read at its latest committed version.
 */
export function creditsLockHolders(
  q: Queryable,
  keyIds: readonly string[],
): Promise<LockedHolder[]> {
  return q.query<LockedHolder>(
    `select k.id as "keyId", h.id as "holderId", h.credits_key_id as "movedTo",
       h.remaining, h.refill_amount as "refillAmount", h.refill_day as "refillDay",
       h.last_refill_at as "lastRefillAt"
     from keys k
     join keys h on h.id = coalesce(k.credits_key_id, k.id)
     where k.id = any($1::text[])
     order by h.id
     for update of h`,
    [keyIds],
  );
}

/**
 * Locks the credit pool of a live identity for the rest of the transaction and reads it;
 * undefined when the identity is gone (its keys then verify as identity-less).
 */
export function creditsLockPool(
  q: Queryable,
  identityId: string,
): Promise<CreditState | undefined> {
  return creditsPool(q, identityId, "lock");
}

/** The credit pool of a live identity, locked or only read; undefined once it is gone. */
export async function creditsPool(
  q: Queryable,
  identityId: string,
  how: "lock" | "read",
): Promise<CreditState | undefined> {
  const rows = await q.query<CreditState>(
    `select remaining, refill_amount as "refillAmount", refill_day as "refillDay",
       last_refill_at as "lastRefillAt"
     from identities
     where id = $1
       and deleted_at is null${how === "lock" ? "\n     for update" : ""}`,
    [identityId],
  );
  return rows[0];
}

/** Stores a key's balance after a pooled spend (with the refill it applied). */
export async function creditsWriteKey(
  q: Queryable,
  keyId: string,
  remaining: number,
  lastRefillAt: number | null,
): Promise<void> {
  await q.query(
    `update keys
     set remaining = $2,
         last_refill_at = $3
     where id = $1`,
    [keyId, remaining, lastRefillAt],
  );
}

/** Stores an identity's pool after a pooled spend (with the refill it applied). */
export async function creditsWritePool(
  q: Queryable,
  identityId: string,
  remaining: number,
  lastRefillAt: number | null,
): Promise<void> {
  await q.query(
    `update identities
     set remaining = $2,
         last_refill_at = $3
     where id = $1`,
    [identityId, remaining, lastRefillAt],
  );
}
