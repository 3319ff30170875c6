import type { Clock } from "../domain/clock.js";
import {
  applyRefill,
  type CreditState,
  type PooledCost,
  refillBoundaries,
  spendInOrder,
  spendPooledInOrder,
  UNLIMITED,
} from "../domain/credits.js";
import { IDEMPOTENCY_WINDOW_MS } from "../domain/idempotency.js";
import { type ClaimedSpend, spendClaimed } from "./claimed-spends.js";
import type { Db, Queryable } from "./db.js";
import { GroupedCalls } from "./grouped-calls.js";
import { pooledEntries } from "./pooled-entries.js";
import { creditLedgerAppend } from "./queries/credit-ledger.js";
import {
  type BatchSpend,
  creditsLockHolders,
  creditsLockPool,
  creditsSpendBatch,
  creditsWriteKey,
  creditsWritePool,
  type LockedHolder,
} from "./queries/credits.js";

/** Moves of a balance a spend follows before giving up (each needs a concurrent reroll). */
const MAX_HOPS = 8;

/** The outcome of one spend. `remaining` is the balance after it (or now, when refused). */
export type SpendResult =
  | { status: "spent"; remaining: number }
  | { status: "insufficient"; remaining: number }
  | { status: "unlimited" }
  | { status: "gone" };

/**
 * Spending credits: `CreditSpender` itself (grouped spends, each committed on its own) or
 * `CreditSpender.within(tx)` (one spend at a time inside a caller's transaction).
 */
export interface CreditSpending {
  spend(keyId: string, cost: number, holderId?: string): Promise<SpendResult>;
  spendPooled(identityId: string, keyId: string, cost: number): Promise<PooledResult>;
}

/** One spend waiting in its group: the key being verified and the cost. */
interface Spend {
  /** The key being verified (its balance may be held by the group's key). */
  keyId: string;
  cost: number;
}

/**
 * The outcome of one spend from an identity's pool (and the key's own balance, if any):
 * both balances after it (or now, when refused), null for one without a limit.
 */
export type PooledResult =
  | { status: "spent" | "insufficient"; keyRemaining: number | null; poolRemaining: number | null }
  | { status: "gone" };

/**
 * Spends credits exactly and durably, and fast under contention: while one statement for
 * a key is in flight, the spends that arrive for that key wait and then go together as
 * one statement (creditsSpendBatch). At low load a spend is one statement at once; on a
 * hot key N concurrent spends cost about one round trip instead of N serialised ones.
 * Every acknowledged spend was committed before its promise resolved.
 *
 * The caller names the key holding the balance as its cached record says. A record can be
 * behind: a reroll that commits meanwhile moves the balance to the new key (followed here,
 * see `movedTo`), and deleting the holder for good gives the keys that spent from it their
 * own copy (the spend then goes to the verified key itself).
 */
export class CreditSpender implements CreditSpending {
  /** Spends grouped by the key holding the balance. */
  private readonly keys = new GroupedCalls<Spend, SpendResult>((holderId, batch) =>
    this.spendBatch(this.db, holderId, batch, (keyId, cost) => this.spend(keyId, cost)),
  );
  /** Pooled spends grouped by identity. */
  private readonly pools = new GroupedCalls<Spend, PooledResult>((identityId, batch) =>
    this.db.transaction((tx) => this.spendPoolBatch(tx, identityId, batch)),
  );
  /**
   * Claimed spends (an idempotency key each), grouped like the plain ones but apart from them:
   * their batch is a transaction (claim, spend, store the answers), which a plain spend must
   * not wait for.
   */
  private readonly claimedKeys = new GroupedCalls<
    ClaimedSpend<SpendResult>,
    SpendResult | undefined
  >((holderId, batch) =>
    spendClaimed(this.db, batch, this.expiredAt(), async (tx, _, claiming, keep) => {
      // The batch statement locks and spends at once: it needs the claimed costs first.
      const claimed = await claiming;
      if (claimed.length === 0) return [];
      const inTx = this.within(tx);
      const spent = this.spendBatch(tx, holderId, claimed, (keyId, cost) =>
        inTx.spend(keyId, cost),
      );
      const results = await Promise.all(await spent);
      await keep(results);
      return results;
    }),
  );
  /** Claimed pooled spends grouped by identity. */
  private readonly claimedPools = new GroupedCalls<
    ClaimedSpend<PooledResult>,
    PooledResult | undefined
  >((identityId, batch) =>
    spendClaimed(this.db, batch, this.expiredAt(), (tx, members, claimed, alongside) =>
      this.spendPoolBatch(tx, identityId, members, { claimed, alongside }),
    ),
  );

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Takes `cost` (> 0) from the balance key `keyId` spends, held by `holderId` (the key
   * itself, or the key a rerolled key was replaced by).
   */
  spend(keyId: string, cost: number, holderId = keyId): Promise<SpendResult> {
    return this.keys.call(holderId, { keyId, cost });
  }

  /**
   * The same spends inside transaction `tx`, one statement each and not grouped: they commit
   * or roll back with the caller's other writes (an idempotency record claimed in `tx`), which
   * a grouped statement shared by other callers could not. Nothing here uses another
   * connection, as one transaction must not wait for a connection its own callers may hold.
   */
  within(tx: Queryable): CreditSpending {
    const spend = async (keyId: string, cost: number, holderId = keyId): Promise<SpendResult> => {
      const [result] = await this.spendBatch(tx, holderId, [{ keyId, cost }], spend);
      return result as SpendResult | Promise<SpendResult>;
    };
    return {
      spend,
      spendPooled: async (identityId, keyId, cost) => {
        const [result] = await this.spendPoolBatch(tx, identityId, [{ keyId, cost }]);
        return result as PooledResult;
      },
    };
  }

  /**
   * `spend` made exactly once: the spend claims its idempotency key and stores the answer
   * `s.answerOf` builds, in its batch's transaction. Undefined when another call holds the
   * key: nothing was spent (that call's answer is the one to give).
   */
  spendOnce(holderId: string, s: ClaimedSpend<SpendResult>): Promise<SpendResult | undefined> {
    return this.claimedKeys.call(holderId, s);
  }

  /** `spendPooled` made exactly once, as `spendOnce` is. */
  spendPooledOnce(
    identityId: string,
    s: ClaimedSpend<PooledResult>,
  ): Promise<PooledResult | undefined> {
    return this.claimedPools.call(identityId, s);
  }

  /** Records created at or before this instant count as absent. */
  private expiredAt(): number {
    return this.clock.now() - IDEMPOTENCY_WINDOW_MS;
  }

  /** One grouped spend, following the balance when a reroll moved it meanwhile. */
  private async spendFollowing(
    q: Queryable,
    holderId: string,
    costs: readonly number[],
  ): Promise<BatchSpend> {
    let id = holderId;
    // A committed state has no chains (a reroll repoints every key that spent from the old
    // key), so each hop needs another reroll committed in between: a few at most.
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const now = this.clock.now();
      const r = await creditsSpendBatch(q, id, costs, refillBoundaries(now), now);
      if (r.movedTo === null) return r;
      id = r.movedTo;
    }
    throw new Error(`the balance of ${holderId} moved ${MAX_HOPS} times during one spend`);
  }

  /**
   * One batch of spends from the balance `holderId` holds, answered in order through `q`;
   * `respend` spends again for a key whose holder is gone, the way the batch was spent (grouped,
   * or inside the caller's transaction, which must not reach for another connection).
   */
  private async spendBatch(
    q: Queryable,
    holderId: string,
    batch: readonly Spend[],
    respend: (keyId: string, cost: number) => Promise<SpendResult>,
  ): Promise<(SpendResult | Promise<SpendResult>)[]> {
    const costs = batch.map((p) => p.cost);
    const r = await this.spendFollowing(q, holderId, costs);
    const outcomes = r.found && !r.unlimited ? spendInOrder(r.before, costs) : [];
    return batch.map((p, i) => {
      const o = outcomes[i];
      if (!r.found) {
        // The holder was deleted for good: a key that spent from it has its own copy now.
        return p.keyId === holderId ? { status: "gone" } : respend(p.keyId, p.cost);
      }
      if (!o) return { status: "unlimited" };
      return { status: o.taken ? "spent" : "insufficient", remaining: o.remaining };
    });
  }

  /**
   * Takes `cost` (> 0) from the credit pool of identity `identityId` and, when key `keyId`
   * has credits of its own, from those too: from both or from neither, in one transaction.
   * Spends of one pool on this node wait for the one in flight and then go together, as
   * spends of one key do; across nodes the pool's row lock makes them take turns.
   */
  spendPooled(identityId: string, keyId: string, cost: number): Promise<PooledResult> {
    return this.pools.call(identityId, { keyId, cost });
  }

  /**
   * One transaction for a batch of pooled spends. The keys' balances are locked before the
   * pool (in holder id order), the order in which every other writer that takes both locks
   * them (a key change that links an identity), so that spends never deadlock with them.
   * Refills due are applied to each balance (the rule of `applyRefill`), the costs taken in
   * order (`spendPooledInOrder`), and the changed balances written before the commit. With
   * `claims`, the answers are those of the claimed members only, and `claims.alongside`
   * writes for them go with the balances' writes.
   */
  private async spendPoolBatch(
    tx: Queryable,
    identityId: string,
    members: readonly Spend[],
    claims?: ClaimsInFlight,
  ): Promise<PooledResult[]> {
    const now = this.clock.now();
    // With claims in flight, the holders of every member are locked in the same round trip;
    // then only the members that hold their claim spend.
    const locking = lockHolders(tx, [...new Set(members.map((p) => p.keyId))]);
    const [holders, batch] = await Promise.all([locking, claims?.claimed ?? members]);
    if (batch.length === 0) return [];
    const stored = await creditsLockPool(tx, identityId);
    const pool = applyRefill(stored ?? UNLIMITED, now);
    const keys = new Map<string, CreditState>();
    for (const h of holders.values()) keys.set(h.holderId, applyRefill(h, now));
    const balances = new Map([...keys].map(([id, k]) => [id, k.remaining] as const));
    const present = batch.filter((p) => holders.has(p.keyId));
    const costs: PooledCost[] = present.map((p) => {
      const holderId = holders.get(p.keyId)?.holderId ?? null;
      const own = holderId === null ? null : (keys.get(holderId)?.remaining ?? null);
      return { holder: own === null ? null : holderId, cost: p.cost };
    });
    const walked = spendPooledInOrder(pool.remaining, balances, costs);
    let n = 0;
    const results: PooledResult[] = batch.map((p) => {
      if (!holders.has(p.keyId)) return { status: "gone" };
      const o = walked.outcomes[n++] as (typeof walked.outcomes)[number];
      return {
        status: o.taken ? "spent" : "insufficient",
        keyRemaining: o.keyRemaining,
        poolRemaining: o.poolRemaining,
      };
    });
    // The writes (and the caller's, `alongside`) are sent together, not one round trip each:
    // they run in order on the transaction's connection, and none needs another's answer.
    const writes: Promise<void>[] = [];
    if (pool.remaining !== null && (walked.pool !== pool.remaining || pool !== stored)) {
      writes.push(creditsWritePool(tx, identityId, walked.pool as number, pool.lastRefillAt));
    }
    for (const [id, k] of keys) {
      const after = balances.get(id) ?? null;
      const refilled = holderRefilled(holders, id, k);
      if (k.remaining !== null && after !== null && (after !== k.remaining || refilled)) {
        writes.push(creditsWriteKey(tx, id, after, k.lastRefillAt));
      }
    }
    const moved = { stored, pool, poolAfter: walked.pool, holders, keys, balances };
    writes.push(
      creditLedgerAppend(
        tx,
        now,
        pooledEntries(identityId, moved, present, costs, walked.outcomes),
      ),
    );
    if (claims) writes.push(claims.alongside(results));
    await Promise.all(writes);
    return results;
  }
}

/** Claimed spends whose claim statement was sent, and what to write for their results. */
interface ClaimsInFlight {
  /** The members that hold their claim, once the claim statement answered. */
  claimed: Promise<readonly Spend[]>;
  alongside: (results: readonly PooledResult[]) => Promise<void>;
}

/**
 * The locked balance holders of `keyIds` by verified key, following balances a reroll moved
 * meanwhile (a reroll that committed after the locking statement began: read again). A key
 * gone has no entry.
 */
export async function lockHolders(
  tx: Queryable,
  keyIds: readonly string[],
): Promise<Map<string, LockedHolder>> {
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const rows = await creditsLockHolders(tx, keyIds);
    if (rows.every((r) => r.movedTo === null)) return new Map(rows.map((r) => [r.keyId, r]));
  }
  throw new Error(`a balance of ${keyIds.join(", ")} moved ${MAX_HOPS} times while locked`);
}

/** Whether applying refills changed holder `id`'s stored state (then it must be written). */
function holderRefilled(
  holders: ReadonlyMap<string, LockedHolder>,
  id: string,
  after: CreditState,
): boolean {
  for (const h of holders.values()) {
    if (h.holderId === id) return h.lastRefillAt !== after.lastRefillAt;
  }
  return false;
}
