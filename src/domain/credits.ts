/**
 * Credits and their refill: at each boundary (daily at
 * 00:00 UTC; monthly at 00:00 UTC on `refillDay`, or on the last day of a shorter month) a
 * balance below `amount` is raised to `amount`, and a balance at or above it is left alone.
 * Refills are applied lazily: whoever reads or changes a balance first applies the
 * boundaries passed since `lastRefillAt`, so reads, updates and verifications agree.
 */

/** The stored credit settings of a key. `remaining` null means unlimited. */
export interface CreditState {
  remaining: number | null;
  refillAmount: number | null;
  /** Day of the month of a monthly refill; null with an amount means daily. */
  refillDay: number | null;
  /** The boundary (or creation time) the balance was last refilled at. */
  lastRefillAt: number | null;
}

/** No credit limit: nothing is spent, nothing refills. */
export const UNLIMITED: Readonly<CreditState> = Object.freeze({
  remaining: null,
  refillAmount: null,
  refillDay: null,
  lastRefillAt: null,
});

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

function monthlyBoundary(year: number, month: number, refillDay: number): number {
  return Date.UTC(year, month, Math.min(refillDay, daysInMonth(year, month)));
}

/** The latest refill boundary at or before `now` (Unix ms). */
export function latestRefillBoundary(now: number, refillDay: number | null): number {
  if (refillDay === null) return Math.floor(now / DAY_MS) * DAY_MS;
  const d = new Date(now);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  const thisMonth = monthlyBoundary(year, month, refillDay);
  if (thisMonth <= now) return thisMonth;
  return monthlyBoundary(month === 0 ? year - 1 : year, month === 0 ? 11 : month - 1, refillDay);
}

/** The state after applying every refill boundary passed by `now`; unchanged when none. */
export function applyRefill(state: CreditState, now: number): CreditState {
  if (state.refillAmount === null || state.remaining === null) return state;
  const boundary = latestRefillBoundary(now, state.refillDay);
  if (state.lastRefillAt !== null && state.lastRefillAt >= boundary) return state;
  return {
    ...state,
    remaining: Math.max(state.remaining, state.refillAmount),
    lastRefillAt: boundary,
  };
}

/** Credit settings as a request gives them, before they are checked. */
export interface CreditsInput {
  remaining: number | null;
  refill: {
    interval: "daily" | "monthly" | undefined;
    amount: number;
    refillDay: number | null;
  } | null;
}

/** A rule broken by credit settings: where (JSON Pointer) and what. */
export interface CreditViolation {
  location: string;
  message: string;
}

/**
 * The cross-field rules of credits: a refill needs a numeric `remaining`; `refillDay`
 * belongs to the monthly interval only, and the monthly interval needs one.
 */
export function creditViolations(c: CreditsInput, pointer: string): CreditViolation[] {
  const out: CreditViolation[] = [];
  if (!c.refill) return out;
  if (c.remaining === null) {
    out.push({
      location: `${pointer}/remaining`,
      message: "must be a number when a refill is set",
    });
  }
  if (c.refill.interval === "daily" && c.refill.refillDay !== null) {
    out.push({
      location: `${pointer}/refill/refillDay`,
      message: "must not be given with the daily interval",
    });
  }
  if (c.refill.interval === "monthly" && c.refill.refillDay === null) {
    out.push({
      location: `${pointer}/refill/refillDay`,
      message: "is required with the monthly interval",
    });
  }
  return out;
}

/**
 * The latest refill boundary at `now` for every refill setting: index 0 is the daily
 * boundary, index d (1 to 31) the monthly boundary on day d. SQL picks the entry of a
 * key's own `refill_day`, so a decrement applies exactly the refill this module defines.
 */
export function refillBoundaries(now: number): number[] {
  const out = [latestRefillBoundary(now, null)];
  for (let d = 1; d <= 31; d++) out.push(latestRefillBoundary(now, d));
  return out;
}

/** What spending one cost did: taken or refused, and the balance after it. */
export interface CostOutcome {
  taken: boolean;
  remaining: number;
}

/**
 * Spends costs from a balance one after the other, as separate verifications in this order
 * would: each cost is taken if the balance left covers it, else refused (spending nothing),
 * and a later, smaller cost may still be taken. Concurrent spends of one key are grouped
 * into one statement (creditsSpendBatch), which must give exactly these outcomes.
 */
export function spendInOrder(balance: number, costs: readonly number[]): CostOutcome[] {
  let left = balance;
  return costs.map((cost) => {
    if (cost > left) return { taken: false, remaining: left };
    left -= cost;
    return { taken: true, remaining: left };
  });
}

/** One verification's spend from an identity's pool and, when the key has its own, a key balance. */
export interface PooledCost {
  /** The key holding the verified key's own balance; null when that key is unlimited. */
  holder: string | null;
  cost: number;
}

/** What one pooled spend did: taken from both balances or from neither, and both after it. */
export interface PooledOutcome {
  taken: boolean;
  /** The key's own balance after the spend; null for a key without credits. */
  keyRemaining: number | null;
  /** The pool's balance after the spend; null for an unlimited pool. */
  poolRemaining: number | null;
}

/**
 * Spends costs from an identity's pool and the keys' own balances one after the other, as
 * separate verifications in this order would: a cost is taken only when every limited
 * balance it draws on (the pool, and the key's own when it has one) covers it, and then from
 * each of them; otherwise nothing is taken from either. `keys` holds the balances by holder
 * and is updated in place; the pool after the last spend is returned with the outcomes.
 */
export function spendPooledInOrder(
  pool: number | null,
  keys: Map<string, number | null>,
  costs: readonly PooledCost[],
): { outcomes: PooledOutcome[]; pool: number | null } {
  let left = pool;
  const outcomes = costs.map(({ holder, cost }) => {
    const own = holder === null ? null : (keys.get(holder) ?? null);
    const taken = (left === null || cost <= left) && (own === null || cost <= own);
    if (taken) {
      if (left !== null) left -= cost;
      if (own !== null && holder !== null) keys.set(holder, own - cost);
    }
    const keyRemaining = holder === null ? null : (keys.get(holder) ?? null);
    return { taken, keyRemaining, poolRemaining: left };
  });
  return { outcomes, pool: left };
}
