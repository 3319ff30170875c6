import { type LedgerEntry, spendEntry } from "../domain/credit-ledger.js";
import type { CreditState, PooledCost } from "../domain/credits.js";
import type { LockedHolder } from "./queries/credits.js";

/** What one pooled batch found and left: the balances before and after, by holder. */
export interface PooledMoves {
  /** The pool as stored, and with a due refill applied; `poolAfter` after the spends. */
  stored: CreditState | undefined;
  pool: CreditState;
  poolAfter: number | null;
  holders: ReadonlyMap<string, LockedHolder>;
  /** The keys' balances with a due refill applied, by holder; `balances` after the spends. */
  keys: ReadonlyMap<string, CreditState>;
  balances: ReadonlyMap<string, number | null>;
}

/**
 * The ledger entries of a pooled batch: one for the pool and one for each key balance it
 * moved (what was taken and refilled), and one for each verified key without credits of its
 * own that took from a limited pool (its charges, so a key's statement shows what its
 * verifications cost).
 */
export function pooledEntries(
  identityId: string,
  m: PooledMoves,
  present: readonly { keyId: string; cost: number }[],
  costs: readonly PooledCost[],
  outcomes: readonly { taken: boolean }[],
): LedgerEntry[] {
  const entries: LedgerEntry[] = [];
  const pool = m.pool.remaining;
  if (pool !== null) {
    entries.push(spendEntry(identityId, m.stored?.remaining ?? pool, pool, m.poolAfter as number));
  }
  const stored = new Map([...m.holders.values()].map((h) => [h.holderId, h.remaining] as const));
  for (const [id, k] of m.keys) {
    const refilled = k.remaining;
    if (refilled === null) continue;
    entries.push(
      spendEntry(id, stored.get(id) ?? refilled, refilled, m.balances.get(id) ?? refilled),
    );
  }
  if (m.pool.remaining === null) return entries;
  const poolOnly = new Map<string, number>();
  present.forEach((p, i) => {
    if (costs[i]?.holder !== null || !outcomes[i]?.taken) return;
    poolOnly.set(p.keyId, (poolOnly.get(p.keyId) ?? 0) + p.cost);
  });
  for (const [keyId, spent] of poolOnly)
    entries.push({ subjectId: keyId, spent, refilled: 0, adjusted: 0 });
  return entries;
}
