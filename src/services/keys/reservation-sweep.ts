import type { Clock } from "../../domain/clock.js";
import type { Logger } from "../../log.js";
import type { Db } from "../../storage/db.js";
import {
  reservationsDeleteSettled,
  reservationsLockExpired,
} from "../../storage/queries/reservations.js";
import { settleReservation } from "./reservation-settlement.js";

/** Expired reservations one pass settles at most: one short transaction, whatever the backlog. */
export const SWEEP_BATCH = 200;
/** How long a settlement is kept for repeats to answer, before the sweep deletes it. */
export const SETTLED_KEPT_MS = 86_400_000;
/** The longest wait between passes; a shorter TTL sweeps as often as it expires. */
const MAX_SWEEP_INTERVAL_MS = 10_000;

/** What one pass did. */
export interface SweepResult {
  settled: number;
  deleted: number;
}

/**
 * One pass: settles in full up to SWEEP_BATCH reservations whose time ran out (nothing moves:
 * their amount was charged when they were made), then deletes up to as many settled a day ago.
 * Rows are taken with `for update skip locked`, so processes sharing one database sweep side by
 * side without waiting for each other and without settling a row twice; a settle in progress
 * keeps its row and decides it itself.
 */
export async function sweepReservations(db: Db, now: number): Promise<SweepResult> {
  const settled = await db.transaction(async (tx) => {
    const rows = await reservationsLockExpired(tx, now, SWEEP_BATCH);
    for (const r of rows) await settleReservation(tx, r, r.amount, true, now);
    return rows.length;
  });
  const deleted = await reservationsDeleteSettled(db, now - SETTLED_KEPT_MS, SWEEP_BATCH);
  return { settled, deleted };
}

/**
 * Runs `sweepReservations` every `ttlS` seconds, at least every 10 s, until stopped; a settle
 * that finds a reservation expired before the sweep did settles it in full itself, so the
 * sweep's delay is never seen. Failures are logged and the next pass tries again.
 */
export function scheduleReservationSweep(
  db: Db,
  clock: Clock,
  ttlS: number,
  log: Logger,
): { stop(): Promise<void>; runNow(): Promise<SweepResult | undefined> } {
  let running: Promise<SweepResult | undefined> | undefined;
  const pass = async () => {
    try {
      const result = await sweepReservations(db, clock.now());
      if (result.settled > 0 || result.deleted > 0) log.info(result, "credit reservations swept");
      return result;
    } catch (err) {
      log.warn({ err }, "sweeping credit reservations failed; retrying at the next pass");
      return undefined;
    } finally {
      running = undefined;
    }
  };
  // One pass at a time per process: a slow pass is not joined by the next tick.
  const runNow = () => {
    running ??= pass();
    return running;
  };
  const timer = setInterval(() => void runNow(), Math.min(ttlS * 1000, MAX_SWEEP_INTERVAL_MS));
  timer.unref();
  return {
    // Stops the timer and waits for a pass in flight, so the database is not closed under it.
    async stop() {
      clearInterval(timer);
      await running;
    },
    runNow,
  };
}
