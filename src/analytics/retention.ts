import { bucketStart } from "../domain/analytics/rollups.js";
import { IDEMPOTENCY_WINDOW_MS } from "../domain/idempotency.js";
import type { Logger } from "../log.js";
import type { Db } from "../storage/db.js";
import { consoleSessionDeleteExpired } from "../storage/queries/console-sessions.js";
import { creditLedgerDeleteBefore } from "../storage/queries/credit-ledger.js";
import { EVENT_TABLES } from "../storage/queries/events.js";
import { idempotencyDeleteExpired } from "../storage/queries/idempotency.js";
import {
  eventPartitionDrop,
  eventPartitionsList,
  rollupDeleteBefore,
} from "../storage/queries/retention.js";
import { deliveryDeleteFinishedBefore } from "../storage/queries/webhook-deliveries.js";

const DAY_MS = 86_400_000;

/** What one retention pass removed. */
export interface RetentionResult {
  droppedPartitions: string[];
  deletedRollupRows: number;
}

/**
 * Removes analytics older than `days` from every table: whole daily partitions of the raw
 * tables and the minute rollup once their day has left the window, and hour, day and month
 * rollup rows whose bucket started before the window's first hour, day or month. Running it
 * on several processes at once is harmless (drops are `if exists`, deletes idempotent).
 */
export async function applyRetention(
  db: Db,
  nowMs: number,
  days: number,
): Promise<RetentionResult> {
  const cutoff = nowMs - days * DAY_MS;
  const firstKeptDay = bucketStart("day", cutoff);
  const droppedPartitions: string[] = [];
  for (const table of EVENT_TABLES) {
    for (const p of await eventPartitionsList(db, table)) {
      if (p.dayStartMs + DAY_MS > firstKeptDay) continue;
      await eventPartitionDrop(db, p.name);
      droppedPartitions.push(p.name);
    }
  }
  let deletedRollupRows = 0;
  // Hours, days and the raw and minute tables (whole daily partitions) all start at the same
  // edge, the first kept day, so they agree over it; months are kept whole.
  deletedRollupRows += await rollupDeleteBefore(db, "verifications_per_hour", firstKeptDay);
  deletedRollupRows += await rollupDeleteBefore(db, "verifications_per_day", firstKeptDay);
  deletedRollupRows += await rollupDeleteBefore(
    db,
    "verifications_per_month",
    bucketStart("month", cutoff),
  );
  return { droppedPartitions, deletedRollupRows };
}

/** Idempotency records one delete statement removes at most: a short statement, few locks. */
const IDEMPOTENCY_BATCH = 5_000;
/**
 * Delete statements one pass runs at most: 500,000 records, about 140 idempotent requests a
 * second all day long, and a pass of bounded length; whatever is left goes in the next pass
 * (expired records left over meanwhile count as absent, so they only take space).
 */
const IDEMPOTENCY_BATCHES_PER_PASS = 100;

/**
 * Deletes idempotency records past their window, oldest first, in bounded statements (see
 * above); answers how many went. Harmless on several processes at once (a row goes once).
 */
export function expireIdempotencyRecords(db: Db, nowMs: number): Promise<number> {
  const expiredAt = nowMs - IDEMPOTENCY_WINDOW_MS;
  return deleteInBatches(
    (limit) => idempotencyDeleteExpired(db, expiredAt, limit),
    IDEMPOTENCY_BATCH,
    IDEMPOTENCY_BATCHES_PER_PASS,
  );
}

/**
 * Runs `deleteUpTo(batch)` until a statement deletes fewer than `batch` rows or `maxBatches`
 * ran; answers how many went in all.
 */
async function deleteInBatches(
  deleteUpTo: (limit: number) => Promise<number>,
  batch: number,
  maxBatches: number,
): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await deleteUpTo(batch);
    deleted += n;
    if (n < batch) break;
  }
  return deleted;
}

/** Ledger entries one delete statement removes at most (see IDEMPOTENCY_BATCH). */
const LEDGER_BATCH = 5_000;
/** Delete statements one pass runs at most; the rest goes in the next pass. */
const LEDGER_BATCHES_PER_PASS = 100;

/**
 * Deletes credit ledger entries older than `days`, in bounded statements; answers how many
 * went. Their own window, apart from analytics': statements are invoiced from, so they are
 * kept longer by default. Harmless on several processes at once.
 */
export function expireCreditLedger(db: Db, nowMs: number, days: number): Promise<number> {
  return expireOlderThan(creditLedgerDeleteBefore, db, nowMs - days * DAY_MS);
}

/** Runs a `deleteBefore(db, cutoff, limit)` query in bounded statements, a bounded number. */
function expireOlderThan(
  deleteBefore: (db: Db, beforeMs: number, limit: number) => Promise<number>,
  db: Db,
  cutoff: number,
): Promise<number> {
  return deleteInBatches(
    (limit) => deleteBefore(db, cutoff, limit),
    LEDGER_BATCH,
    LEDGER_BATCHES_PER_PASS,
  );
}

/**
 * Deletes console sessions that have ended (idle for `idleMs` or past their lifetime), in
 * bounded statements; answers how many went. Ended sessions are refused anyway: this only
 * gives back their space. Harmless on several processes at once.
 */
export function expireConsoleSessions(db: Db, nowMs: number, idleMs: number): Promise<number> {
  return deleteInBatches(
    (limit) => consoleSessionDeleteExpired(db, nowMs - idleMs, nowMs, limit),
    LEDGER_BATCH,
    LEDGER_BATCHES_PER_PASS,
  );
}

/**
 * Deletes delivered and failed webhook deliveries (with their attempts) made more than `days`
 * ago, in bounded statements; answers how many went. Pending ones are kept: they are given
 * up within their retry window first. Harmless on several processes at once.
 */
export function expireWebhookDeliveries(db: Db, nowMs: number, days: number): Promise<number> {
  return expireOlderThan(deliveryDeleteFinishedBefore, db, nowMs - days * DAY_MS);
}

/** How long each kind of record is kept, in days (console sessions: their idle bound). */
export interface RetentionDays {
  /** Verification and rate-limit events and their rollups. */
  eventDays: number;
  /** Credit ledger entries. */
  creditLedgerDays: number;
  /** How long a console session may go unused, in milliseconds. */
  consoleSessionIdleMs: number;
  /** Finished webhook deliveries and their attempts. */
  webhookDeliveryDays: number;
}

/**
 * Runs `applyRetention` now and then every hour until stopped, and with it the expiry of
 * idempotency records (an hourly pass leaves a record at most an hour past its 24 hours, and
 * it counts as absent meanwhile), of credit ledger entries, of ended console sessions and of
 * finished webhook deliveries; failures are logged.
 */
export function scheduleRetention(
  db: Db,
  clock: { now(): number },
  days: RetentionDays,
  log: Logger,
): { stop(): void; runNow(): Promise<RetentionResult | undefined> } {
  // Each pass on its own: one that fails (logged) does not keep the others from running.
  const passes: [string, () => Promise<number>][] = [
    ["expired idempotency records", () => expireIdempotencyRecords(db, clock.now())],
    [
      "expired credit ledger entries",
      () => expireCreditLedger(db, clock.now(), days.creditLedgerDays),
    ],
    [
      "ended console sessions",
      () => expireConsoleSessions(db, clock.now(), days.consoleSessionIdleMs),
    ],
    [
      "finished webhook deliveries",
      () => expireWebhookDeliveries(db, clock.now(), days.webhookDeliveryDays),
    ],
  ];
  const runNow = async () => {
    for (const [what, pass] of passes) {
      try {
        const deleted = await pass();
        if (deleted > 0) log.info({ deleted }, `${what} deleted`);
      } catch (err) {
        log.warn({ err }, `deleting ${what} failed; retrying in an hour`);
      }
    }
    try {
      const result = await applyRetention(db, clock.now(), days.eventDays);
      if (result.droppedPartitions.length > 0 || result.deletedRollupRows > 0)
        log.info(result, "analytics retention applied");
      return result;
    } catch (err) {
      log.warn({ err }, "analytics retention failed; retrying in an hour");
      return undefined;
    }
  };
  const timer = setInterval(() => void runNow(), 3_600_000);
  timer.unref();
  void runNow();
  return { stop: () => clearInterval(timer), runNow };
}
