import type { CreditState } from "../../domain/credits.js";
import type { Queryable } from "../db.js";

/** A reservation as made by a verification: what it holds and where it was taken from. */
export interface NewReservation {
  id: string;
  workspaceId: string;
  apiId: string;
  keyId: string;
  /** The key's balance (or the balance a reroll moved it to) was charged. */
  keyCharged: boolean;
  /** The identity whose pool was charged; null when none was. */
  identityId: string | null;
  amount: number;
  createdAt: number;
  expiresAt: number;
}

/** How a reservation was settled: what a repeat answers. */
export interface StoredSettlement {
  settledAt: number;
  used: number;
  refunded: number;
  shortfall: number;
  remaining: number | null;
  identityRemaining: number | null;
  expired: boolean;
}

/** A reservation row; the settlement's fields are null until it is settled. */
export interface ReservationRow extends NewReservation {
  settledAt: number | null;
  used: number | null;
  refunded: number | null;
  shortfall: number | null;
  remaining: number | null;
  identityRemaining: number | null;
  expired: boolean | null;
}

const COLUMNS = `id, workspace_id as "workspaceId", api_id as "apiId", key_id as "keyId",
  key_charged as "keyCharged", identity_id as "identityId", amount, created_at as "createdAt",
  expires_at as "expiresAt", settled_at as "settledAt", used, refunded, shortfall, remaining,
  identity_remaining as "identityRemaining", expired`;

/** Stores a reservation, in the transaction that charged its amount. */
export async function reservationInsert(q: Queryable, r: NewReservation): Promise<void> {
  await q.query(
    `insert into credit_reservations
       (id, workspace_id, api_id, key_id, key_charged, identity_id, amount, created_at,
        expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      r.id,
      r.workspaceId,
      r.apiId,
      r.keyId,
      r.keyCharged,
      r.identityId,
      r.amount,
      r.createdAt,
      r.expiresAt,
    ],
  );
}

/**
 * A reservation of a workspace, locked for the rest of the transaction when `lock` is set
 * (two settles of one reservation take turns on its row: the second sees the first's
 * settlement); undefined when the workspace has none of that id.
 */
export async function reservationGet(
  q: Queryable,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<ReservationRow | undefined> {
  const rows = await q.query<ReservationRow>(
    `select ${COLUMNS}
     from credit_reservations
     where id = $1
       and workspace_id = $2
     ${lock ? "for update" : ""}`,
    [id, workspaceId],
  );
  return rows[0];
}

/** Stores a reservation's settlement (its row is locked by the caller's transaction). */
export async function reservationSettle(
  q: Queryable,
  id: string,
  s: StoredSettlement,
): Promise<void> {
  await q.query(
    `update credit_reservations
     set settled_at = $2, used = $3, refunded = $4, shortfall = $5, remaining = $6,
         identity_remaining = $7, expired = $8
     where id = $1`,
    [id, s.settledAt, s.used, s.refunded, s.shortfall, s.remaining, s.identityRemaining, s.expired],
  );
}

/**
 * Locks up to `limit` unsettled reservations that expired at or before `now`, oldest first,
 * skipping rows another transaction holds (a settle in progress, or another process's sweep),
 * so that several processes sweep side by side without waiting on each other.
 */
export function reservationsLockExpired(
  q: Queryable,
  now: number,
  limit: number,
): Promise<ReservationRow[]> {
  return q.query<ReservationRow>(
    `select ${COLUMNS}
     from credit_reservations
     where settled_at is null
       and expires_at <= $1
     order by expires_at
     limit $2
     for update skip locked`,
    [now, limit],
  );
}

/** Deletes up to `limit` reservations settled at or before `before`; answers how many went. */
export async function reservationsDeleteSettled(
  q: Queryable,
  before: number,
  limit: number,
): Promise<number> {
  const rows = await q.query(
    `delete from credit_reservations
     where id in (
       select id from credit_reservations
       where settled_at is not null
         and settled_at <= $1
       order by settled_at
       limit $2
       for update skip locked
     )
     returning 1`,
    [before, limit],
  );
  return rows.length;
}

/**
 * The balance key `keyId` spends (its own, or the key a reroll moved it to), read without a
 * lock (a settlement in full moves nothing and only reports it); undefined for a key deleted
 * for good.
 */
export async function reservationKeyBalance(
  q: Queryable,
  keyId: string,
): Promise<CreditState | undefined> {
  const rows = await q.query<CreditState>(
    `select h.remaining, h.refill_amount as "refillAmount", h.refill_day as "refillDay",
       h.last_refill_at as "lastRefillAt"
     from keys k
     join keys h on h.id = coalesce(k.credits_key_id, k.id)
     where k.id = $1`,
    [keyId],
  );
  return rows[0];
}

/** The hash of a key, to drop its cached records after its balance moved. */
export async function reservationKeyHash(q: Queryable, keyId: string): Promise<string | undefined> {
  const rows = await q.query<{ hash: string }>(`select hash from keys where id = $1`, [keyId]);
  return rows[0]?.hash;
}
