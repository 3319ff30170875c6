import type { Clock } from "../domain/clock.js";
import { refillBoundaries, spendInOrder } from "../domain/credits.js";
import type { Db } from "./db.js";
import { creditsSpendBatch } from "./queries/credits.js";

/** The outcome of one spend. `remaining` is the balance after it (or now, when refused). */
export type SpendResult =
  | { status: "spent"; remaining: number }
  | { status: "insufficient"; remaining: number }
  | { status: "unlimited" }
  | { status: "gone" };

interface Pending {
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
 */
export class CreditSpender {
  private readonly queues = new Map<string, KeyQueue>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Takes `cost` (> 0) from the balance of key `keyId`. */
  spend(keyId: string, cost: number): Promise<SpendResult> {
    return new Promise((resolve, reject) => {
      let q = this.queues.get(keyId);
      if (!q) {
        q = { running: false, waiting: [] };
        this.queues.set(keyId, q);
      }
      q.waiting.push({ cost, resolve, reject });
      if (!q.running) void this.drain(keyId, q);
    });
  }

  private async drain(keyId: string, q: KeyQueue): Promise<void> {
    q.running = true;
    while (q.waiting.length > 0) {
      const batch = q.waiting;
      q.waiting = [];
      try {
        const costs = batch.map((p) => p.cost);
        const r = await creditsSpendBatch(
          this.db,
          keyId,
          costs,
          refillBoundaries(this.clock.now()),
        );
        const outcomes = r.found && !r.unlimited ? spendInOrder(r.before, costs) : [];
        batch.forEach((p, i) => {
          const o = outcomes[i];
          if (!r.found) p.resolve({ status: "gone" });
          else if (!o) p.resolve({ status: "unlimited" });
          else p.resolve({ status: o.taken ? "spent" : "insufficient", remaining: o.remaining });
        });
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    q.running = false;
    this.queues.delete(keyId);
  }
}
