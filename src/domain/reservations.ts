/**
 * Settling a credit reservation: `reserved` credits were taken from each balance it drew on
 * when it was made; `used` is what the caller finally used. The rule is exact and
 * all-or-nothing, so that a key and its identity pool always move together:
 * - used <= reserved: the difference goes back to every balance the reservation drew on;
 * - used > reserved: the extra is taken from every such balance when each covers it in full;
 *   otherwise none of it is taken and all of it is the shortfall (a partial charge would need
 *   a rule for which balance gets how much, and the caller could not tell what it paid for).
 */
export interface Settlement {
  /** Credits charged in all (`used`, less the shortfall). */
  used: number;
  /** Credits given back to each balance. */
  refunded: number;
  /** Extra credits taken from each balance now. */
  extra: number;
  /** Credits asked for beyond the reservation that were not charged. */
  shortfall: number;
}

/**
 * The settlement of `reserved` when `used` were used, given the balances it drew on now
 * (null for one without a limit, which covers anything).
 */
export function settle(
  reserved: number,
  used: number,
  balances: readonly (number | null)[],
): Settlement {
  if (used <= reserved) return { used, refunded: reserved - used, extra: 0, shortfall: 0 };
  const extra = used - reserved;
  const covered = balances.every((b) => b === null || b >= extra);
  return covered
    ? { used, refunded: 0, extra, shortfall: 0 }
    : { used: reserved, refunded: 0, extra: 0, shortfall: extra };
}

/** A balance after a settlement moved it, never above the largest balance stored (2^53-1). */
export function settledBalance(balance: number, s: Settlement): number {
  return Math.min(Number.MAX_SAFE_INTEGER, balance + s.refunded - s.extra);
}
