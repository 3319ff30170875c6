/**
 * Which credit events one balance move causes, from the balance before and after it:
 * `credits.low` when the balance crosses an endpoint's threshold downwards (it was above, it
 * is at or below), `credits.exhausted` when it reaches 0 from above (a spend that is refused
 * moves nothing, so it causes nothing: the balance reached 0 earlier and was announced then),
 * and `credits.refilled` when a refill added credits.
 */

/** One move of a balance as the credit ledger records it. */
export interface BalanceMove {
  /** The balance after the move. */
  after: number;
  spent: number;
  refilled: number;
  adjusted: number;
}

/** The balance before a move: what it was before the refill, the change and the spend. */
export function balanceBefore(m: BalanceMove): number {
  return m.after - m.refilled - m.adjusted + m.spent;
}

/** Whether the move crossed `threshold` downwards. */
export function crossesBelow(m: BalanceMove, threshold: number): boolean {
  return balanceBefore(m) > threshold && m.after <= threshold;
}

/** Whether the move brought the balance to 0 from above. */
export function exhausts(m: BalanceMove): boolean {
  return m.after === 0 && balanceBefore(m) > 0;
}

/** Whether a refill added credits in the move. */
export function refills(m: BalanceMove): boolean {
  return m.refilled > 0;
}
