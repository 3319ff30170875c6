import type { MessageInitShape } from "@bufbuild/protobuf";
import type { SettleCreditsResponseDataSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { type LedgerEntry, spendEntry } from "../../domain/credit-ledger.js";
import { applyRefill, type CreditState } from "../../domain/credits.js";
import { type Settlement, settle, settledBalance } from "../../domain/reservations.js";
import { lockHolders } from "../../storage/credit-spender.js";
import type { Queryable } from "../../storage/db.js";
import { creditLedgerAppend } from "../../storage/queries/credit-ledger.js";
import {
  creditsLockPool,
  creditsPool,
  creditsWriteKey,
  creditsWritePool,
} from "../../storage/queries/credits.js";
import {
  type ReservationRow,
  reservationKeyBalance,
  reservationSettle,
  type StoredSettlement,
} from "../../storage/queries/reservations.js";

/**
 * Settles reservation `r`, whose row the caller's transaction has locked and found unsettled:
 * charges `used` in all (the rule of `settle`), writes the balances it moved and stores the
 * settlement, all in `tx`. A settlement of exactly the amount reserved (a reservation that
 * expired, or `used` equal to it) moves nothing, so it takes no lock on the balances: the
 * sweep settles many such rows in one transaction without contending with verifications.
 * Otherwise the key's balance is locked before the pool, the order of every other writer.
 */
export async function settleReservation(
  tx: Queryable,
  r: ReservationRow,
  used: number,
  expired: boolean,
  now: number,
): Promise<StoredSettlement> {
  const moved =
    used === r.amount ? await settleInFull(tx, r, now) : await settleMoving(tx, r, used, now);
  const stored: StoredSettlement = { settledAt: now, ...moved, expired };
  await reservationSettle(tx, r.id, stored);
  return stored;
}

type Moved = Omit<StoredSettlement, "settledAt" | "expired">;

/** Nothing moves: the balances are read only to report them. */
async function settleInFull(tx: Queryable, r: ReservationRow, now: number): Promise<Moved> {
  const key = r.keyCharged ? await reservationKeyBalance(tx, r.keyId) : undefined;
  const pool = r.identityId === null ? undefined : await creditsPool(tx, r.identityId, "read");
  return {
    used: r.amount,
    refunded: 0,
    shortfall: 0,
    remaining: remainingOf(key, now),
    identityRemaining: remainingOf(pool, now),
  };
}

/** Gives back or charges the difference on every balance the reservation drew on. */
async function settleMoving(
  tx: Queryable,
  r: ReservationRow,
  used: number,
  now: number,
): Promise<Moved> {
  const holder = r.keyCharged ? (await lockHolders(tx, [r.keyId])).get(r.keyId) : undefined;
  const storedPool = r.identityId === null ? undefined : await creditsLockPool(tx, r.identityId);
  const key = holder === undefined ? undefined : applyRefill(holder, now);
  const pool = storedPool === undefined ? undefined : applyRefill(storedPool, now);
  // A balance deleted meanwhile takes and gives nothing; one made unlimited covers anything.
  const s = settle(r.amount, used, [key?.remaining ?? null, pool?.remaining ?? null]);
  const keyAfter = await write(key, s, holder, (b, at) =>
    creditsWriteKey(tx, holder?.holderId as string, b, at),
  );
  const poolAfter = await write(pool, s, storedPool, (b, at) =>
    creditsWritePool(tx, r.identityId as string, b, at),
  );
  await creditLedgerAppend(tx, now, [
    settledEntry(holder?.holderId, holder, key, keyAfter),
    settledEntry(r.identityId ?? undefined, storedPool, pool, poolAfter),
    // A key without a balance of its own had the reservation's charge recorded under its id
    // too (see pooledEntries): what the settlement gives back or adds belongs there as well.
    r.keyCharged || poolAfter === null || pool?.remaining == null
      ? undefined
      : spendEntry(r.keyId, pool.remaining, pool.remaining, poolAfter),
  ]);
  return {
    used: s.used,
    refunded: s.refunded,
    shortfall: s.shortfall,
    remaining: keyAfter,
    identityRemaining: poolAfter,
  };
}

/** Writes a limited balance the settlement moved (or refilled); answers it after, or null. */
async function write(
  state: CreditState | undefined,
  s: Settlement,
  stored: CreditState | undefined,
  store: (balance: number, lastRefillAt: number | null) => Promise<void>,
): Promise<number | null> {
  if (state === undefined || state.remaining === null) return null;
  const after = settledBalance(state.remaining, s);
  if (after !== state.remaining || state.lastRefillAt !== stored?.lastRefillAt) {
    await store(after, state.lastRefillAt);
  }
  return after;
}

/**
 * The ledger entry of one balance a settlement moved: negative spent for what it gave back,
 * positive for an extra it charged, and the refill it applied on the way.
 */
function settledEntry(
  subjectId: string | undefined,
  stored: CreditState | undefined,
  state: CreditState | undefined,
  after: number | null,
): LedgerEntry | undefined {
  const refilled = state?.remaining;
  if (subjectId === undefined || refilled == null || after === null) return undefined;
  return spendEntry(subjectId, stored?.remaining ?? refilled, refilled, after);
}

function remainingOf(state: CreditState | undefined, now: number): number | null {
  return state === undefined ? null : applyRefill(state, now).remaining;
}

/** The settlement stored in a row, if it is settled. */
export function storedSettlement(r: ReservationRow): StoredSettlement | undefined {
  if (r.settledAt === null) return undefined;
  return {
    settledAt: r.settledAt,
    used: r.used ?? r.amount,
    refunded: r.refunded ?? 0,
    shortfall: r.shortfall ?? 0,
    remaining: r.remaining,
    identityRemaining: r.identityRemaining,
    expired: r.expired ?? false,
  };
}

/** A stored settlement as SettleCredits answers it. */
export function settlementData(
  r: ReservationRow,
  s: StoredSettlement,
): MessageInitShape<typeof SettleCreditsResponseDataSchema> {
  return {
    reservationId: r.id,
    reserved: BigInt(r.amount),
    used: BigInt(s.used),
    refunded: BigInt(s.refunded),
    shortfall: BigInt(s.shortfall),
    ...(s.remaining === null ? {} : { remaining: BigInt(s.remaining) }),
    ...(s.identityRemaining === null ? {} : { identityRemaining: BigInt(s.identityRemaining) }),
    expired: s.expired,
  };
}
