import { latestRefillBoundary } from "../../domain/credits.js";
import type { KeyRecordRow } from "../../storage/queries/key-records.js";
import type { Deps } from "../deps.js";

/**
 * For each record made by `keepBalance`, the record loaded from the database it descends
 * from: records of one load differ only in their balance.
 */
const loadedAs = new WeakMap<KeyRecordRow, KeyRecordRow>();

function loadOf(r: KeyRecordRow): KeyRecordRow {
  return loadedAs.get(r) ?? r;
}

/** The balances a spend read: the key's own and its identity's pool, each when it has one. */
export interface ReadBalances {
  key: number | null;
  pool: number | null;
}

/**
 * Shows the balances a spend just read in this node's cached record, so that answers which
 * spend nothing (cost 0, refusals) report a current balance; other nodes catch up when their
 * entry expires. A cached record is never changed in place (concurrent verifications hold it):
 * the entry gets a new record with the new balance, and only while it still holds `read`, the
 * record this verification read, or a record an earlier spend made from the same load. An
 * entry invalidated, expired or loaded again since `read` was read is left alone, so a change
 * that raced the spend is never undone by the record it replaced. Spends of one balance on a
 * node finish in the order they were committed, so the last one kept is the newest balance.
 *
 * A pool's balance shown here is for answers only, like the key's: every spend is decided by
 * the database, and other keys of the identity cached on this node show the pool they last
 * read until their entry expires or a change of the identity drops them.
 *
 * `carry` is told of each replacement, to keep what callers derived from the old record
 * (it depends on the fields a spend does not change).
 */
export function keepBalance(
  deps: Pick<Deps, "caches">,
  entry: string,
  read: KeyRecordRow,
  balances: ReadBalances,
  now: number,
  carry: (from: KeyRecordRow, to: KeyRecordRow) => void,
): void {
  const current = deps.caches.keys.peek(entry);
  if (!current) return;
  const load = loadOf(read);
  if (current !== read && loadOf(current) !== load) return;
  const next: KeyRecordRow = { ...current };
  if (balances.key !== null) {
    next.remaining = balances.key;
    if (current.refillAmount !== null)
      next.lastRefillAt = latestRefillBoundary(now, current.refillDay);
  }
  if (balances.pool !== null) {
    next.identityRemaining = balances.pool;
    if (current.identityRefillAmount !== null)
      next.identityLastRefillAt = latestRefillBoundary(now, current.identityRefillDay);
  }
  if (!deps.caches.keys.replace(entry, current, next)) return;
  loadedAs.set(next, load);
  carry(current, next);
}
