import type { Clock } from "../domain/clock.js";
import { refillBoundaries, spendInOrder } from "../domain/credits.js";
import type { Db } from "./db.js";
import { type BatchSpend, creditsSpendBatch } from "./queries/credits.js";

/** Moves of a balance a spend follows before giving up (each needs a concurrent reroll). */
const MAX_HOPS = 8;

/** The outcome of one spend. `remaining` is the balance after it (or now, when refused). */
export type SpendResult =
  | { status: "spent"; remaining: number }
  | { status: "insufficient"; remaining: number }
  | { status: "unlimited" }
  | { status: "gone" };

interface Pending {
  /** The key being verified (its balance may be held by the queue's key). */
  keyId: string;
  cost: number;
  resolve: (r: SpendResult) => void;
  reject: (err: unknown) => void;
}

interface KeyQueue {
  running: boolean;
  waiting: Pending[];
}

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
export class CreditSpender {
  private readonly queues = new Map<string, KeyQueue>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Takes `cost` (> 0) from the balance key `keyId` spends, held by `holderId` (the key
   * itself, or the key a rerolled key was replaced by).
   */
  spend(keyId: string, cost: number, holderId = keyId): Promise<SpendResult> {
    return new Promise((resolve, reject) => {
      let q = this.queues.get(holderId);
      if (!q) {
        q = { running: false, waiting: [] };
        this.queues.set(holderId, q);
      }
      q.waiting.push({ keyId, cost, resolve, reject });
      if (!q.running) void this.drain(holderId, q);
    });
  }

  /** One grouped spend, following the balance when a reroll moved it meanwhile. */
  private async spendFollowing(holderId: string, costs: readonly number[]): Promise<BatchSpend> {
    let id = holderId;
    // A committed state has no chains (a reroll repoints every key that spent from the old
    // key), so each hop needs another reroll committed in between: a few at most.
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const r = await creditsSpendBatch(this.db, id, costs, refillBoundaries(this.clock.now()));
      if (r.movedTo === null) return r;
      id = r.movedTo;
    }
    throw new Error(`the balance of ${holderId} moved ${MAX_HOPS} times during one spend`);
  }

  private async drain(holderId: string, q: KeyQueue): Promise<void> {
    q.running = true;
    while (q.waiting.length > 0) {
      const batch = q.waiting;
      q.waiting = [];
      try {
        const costs = batch.map((p) => p.cost);
        const r = await this.spendFollowing(holderId, costs);
        const outcomes = r.found && !r.unlimited ? spendInOrder(r.before, costs) : [];
        batch.forEach((p, i) => {
          const o = outcomes[i];
          if (!r.found) {
            // The holder was deleted for good: a key that spent from it has its own copy now.
            if (p.keyId === holderId) p.resolve({ status: "gone" });
            else this.spend(p.keyId, p.cost).then(p.resolve, p.reject);
          } else if (!o) p.resolve({ status: "unlimited" });
          else p.resolve({ status: o.taken ? "spent" : "insufficient", remaining: o.remaining });
        });
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    q.running = false;
    this.queues.delete(holderId);
  }
}
