import { GRANULARITIES } from "../domain/analytics/tables.js";
import { type Db, errorCode } from "../storage/db.js";
import {
  copyRatelimitRows,
  copyVerificationRows,
  type EventTable,
  ensureEventPartitions,
} from "../storage/queries/events.js";
import { rollupAdd } from "../storage/queries/rollups.js";
import type { Batch } from "./event-batch.js";

const DAY_MS = 86_400_000;
/** SQLSTATE classes of a value refused: a data exception, a program limit (an index entry). */
const VALUE_REFUSED = new Set(["22", "54"]);

/**
 * Rows per statement of an event write, by engine. A PostgreSQL backend on a small host is
 * woken on the core of the thread that wrote to it, so short statements (100 rows, ~1 ms of
 * database work) keep its hold on the requests' core short. PGlite works on a thread of its
 * own, and much of what it spends is per statement (the message to its thread, the protocol
 * round trip, its JavaScript's garbage): at 3,000 verifications a second, 1,000-row COPYs
 * took its thread from 15-18 us to 8-10 us per verification, with the same p99.
 */
export function eventRowsPerStatement(engine: Db["engine"]): number {
  return engine === "pglite" ? 1000 : 100;
}

/**
 * Writes one batch of events in one transaction: its raw rows and its rollup groups commit
 * together, so a retry after a failure writes no duplicates and the rollups always agree
 * with the raw tables. A slice of rows per statement, with a turn of the event loop between
 * statements.
 *
 * A write can also be spread over a stretch of time (`spreadMs`): its statements leave at
 * even intervals instead of back to back. The database does the work of a statement when it
 * arrives, and on a small machine it does it on the server's cores: PGlite's thread is in the
 * server's process, and a PostgreSQL backend on the same host is woken on the core of the
 * thread that wrote to it, taking that core from the requests. A second's events written in
 * one burst held the server's thread back for tens of milliseconds once a second; one slice
 * at a time, each ~1 ms of database work, holds it back for about that (at 3,000
 * verifications a second on two cores, p99 26-46 ms -> 6 ms on PGlite, 66-70 -> 14-17 ms on
 * PostgreSQL).
 */
export class BatchWriter {
  /** `table:day` of the daily partitions known to exist. */
  private readonly partitions = new Set<string>();
  /** The schedule of the write in progress. */
  private pace: Pace | undefined;

  constructor(
    private readonly db: Db,
    private readonly sliceSize: number,
  ) {}

  /**
   * Writes the batch, or throws the database's error. After most failures the partitions
   * known to exist are forgotten: one dropped meanwhile (retention) would fail every later
   * COPY for its day. Not after a value the database refused (a batch being written in
   * pieces to find that value would otherwise create its partitions again for each piece).
   */
  async write(batch: Batch, spreadMs = 0): Promise<void> {
    try {
      await this.writeOnce(batch, spreadMs);
    } catch (err) {
      if (!VALUE_REFUSED.has(errorCode(err)?.slice(0, 2) ?? "")) this.partitions.clear();
      throw err;
    }
  }

  private async writeOnce(batch: Batch, spreadMs: number): Promise<void> {
    await this.ensurePartitions("key_verifications", batch.verificationDays);
    await this.ensurePartitions("ratelimit_events", batch.decisionDays);
    await this.ensurePartitions("verifications_per_minute", batch.verificationDays);
    const rollups = batch.rollup.rows();
    const rollupSlices = GRANULARITIES.flatMap((g) =>
      // Slices keep the rows' order, so the row locks are still taken in one order.
      [...slices(rollups[g], this.sliceSize)].map((part) => ({ g, part })),
    );
    const statements =
      batch.verifications.slices().length + batch.decisions.slices().length + rollupSlices.length;
    const pace = new Pace(statements > 1 ? spreadMs / (statements - 1) : 0);
    this.pace = pace;
    try {
      await this.db.transaction(async (tx) => {
        for (const rows of batch.verifications.slices()) {
          await copyVerificationRows(tx, rows);
          await pace.next();
        }
        for (const rows of batch.decisions.slices()) {
          await copyRatelimitRows(tx, rows);
          await pace.next();
        }
        for (const { g, part } of rollupSlices) {
          await rollupAdd(tx, g, part);
          await pace.next();
        }
      });
    } finally {
      if (this.pace === pace) this.pace = undefined;
    }
  }

  /** The write in progress, if spread, sends its remaining statements without waiting. */
  hurry(): void {
    this.pace?.hurry();
  }

  private async ensurePartitions(table: EventTable, days: ReadonlySet<number>): Promise<void> {
    const missing = [...days].filter((d) => !this.partitions.has(`${table}:${d}`));
    if (missing.length === 0) return;
    await ensureEventPartitions(
      this.db,
      table,
      missing.map((d) => d * DAY_MS),
    );
    for (const d of missing) this.partitions.add(`${table}:${d}`);
  }
}

/**
 * When the next statement of a write may leave: `gapMs` after the previous one was due, or,
 * when the write is behind that schedule (or not spread), after a turn of the event loop
 * (what is waiting, I/O first, runs before it).
 */
class Pace {
  private due = performance.now();
  /** The wait in progress: its timer, and what ends it. */
  private waiting: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  constructor(private gapMs: number) {}

  /** No more waits; the wait in progress ends now. */
  hurry(): void {
    this.gapMs = 0;
    const w = this.waiting;
    if (w === undefined) return;
    this.waiting = undefined;
    clearTimeout(w.timer);
    w.resolve();
  }

  next(): Promise<void> {
    this.due += this.gapMs;
    const wait = this.due - performance.now();
    if (this.gapMs === 0 || wait < 1) return new Promise((resolve) => setImmediate(resolve));
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        resolve();
      }, wait);
      this.waiting = { timer, resolve };
    });
  }
}

/** Consecutive pieces of at most `size` items. */
function* slices<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
