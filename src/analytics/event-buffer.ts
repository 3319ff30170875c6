import { rollUp } from "../domain/analytics/rollups.js";
import { GRANULARITIES } from "../domain/analytics/tables.js";
import type { Logger } from "../log.js";
import type { Db } from "../storage/db.js";
import {
  type AnalyticsEvent,
  type EventTable,
  ensureEventPartitions,
  insertRatelimitEvents,
  insertVerificationEvents,
  type RatelimitEvent,
  type VerificationEvent,
} from "../storage/queries/events.js";
import { rollupAdd } from "../storage/queries/rollups.js";
import { LastUsedWriter } from "./last-used.js";

/** Sizing of the buffer. */
export interface EventBufferOptions {
  /** Events held at most; beyond, new events are dropped (and counted). */
  maxEvents: number;
  /** How often the buffer is written out. */
  flushIntervalMs: number;
  /** Events per transaction: the raw rows and the rollups of these events commit together. */
  batchSize: number;
  /**
   * Rows per statement within a transaction. Between statements the writer gives the event
   * loop a turn, so on PGlite (which runs on the server's thread) a flush stalls requests
   * for one slice at a time (~1 ms at 50 events) instead of for the whole batch.
   */
  sliceSize: number;
}

/** Counters of the buffer: `recorded + dropped` is every event offered. */
export interface EventCounts {
  recorded: number;
  dropped: number;
  written: number;
  failedFlushes: number;
}

/**
 * A bounded in-memory buffer of analytics events (verifications and rate-limit decisions),
 * written to PostgreSQL in batches off the request path: `record` never waits and never
 * fails. When the database is down the events stay buffered (up to the bound) and go out
 * with a later flush. `stop` flushes. A crash loses at most what was buffered (about one
 * flush interval). Each batch also adds its verifications to the minute, hour, day and month
 * rollups, in the same transaction, and moves keys' lastUsedAt.
 *
 * A timer's pass writes the events buffered when it starts; those recorded meanwhile wait
 * for the next one (under steady load a pass that also took those would never end).
 */
export class EventBuffer {
  private events: AnalyticsEvent[] = [];
  private readonly counts: EventCounts = { recorded: 0, dropped: 0, written: 0, failedFlushes: 0 };
  private readonly partitions = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<boolean> | undefined;
  private readonly lastUsed: LastUsedWriter;

  constructor(
    private readonly db: Db,
    private readonly options: EventBufferOptions,
    private readonly log: Logger,
  ) {
    this.lastUsed = new LastUsedWriter(db, log);
  }

  /** Buffers an event, or counts it as dropped when the buffer is full. */
  record(event: AnalyticsEvent): void {
    if (this.events.length >= this.options.maxEvents) {
      this.counts.dropped++;
      return;
    }
    this.events.push(event);
    this.counts.recorded++;
  }

  /** A copy of the counters. */
  stats(): EventCounts & { buffered: number } {
    return { ...this.counts, buffered: this.events.length };
  }

  start(): void {
    this.timer = setInterval(() => void this.pass(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes out everything buffered (unless the database fails). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /**
   * Writes out every event recorded before this call, also when a timer's pass that started
   * earlier is still running. Resolves false when the database failed; the events stay
   * buffered for a later flush.
   */
  async flush(): Promise<boolean> {
    const upTo = this.counts.recorded;
    while (this.counts.written < upTo) {
      if (!(await this.pass())) return false;
    }
    return true;
  }

  /** One pass over the events buffered when it starts; concurrent callers share it. */
  private pass(): Promise<boolean> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeAll(): Promise<boolean> {
    let due = this.events.length;
    while (due > 0) {
      const batch = this.events.slice(0, Math.min(due, this.options.batchSize));
      const verifications = batch.filter(
        (e): e is AnalyticsEvent & VerificationEvent => e.kind === "verification",
      );
      const decisions = batch.filter(
        (e): e is AnalyticsEvent & RatelimitEvent => e.kind === "ratelimit",
      );
      try {
        await this.ensurePartitions("key_verifications", verifications);
        await this.ensurePartitions("ratelimit_events", decisions);
        await this.ensurePartitions("verifications_per_minute", verifications);
        // The raw events and the rollups commit together, so a retry after a failure
        // writes no duplicates and the rollups always agree with the raw tables.
        const rollups = rollUp(verifications);
        const size = this.options.sliceSize;
        await this.db.transaction(async (tx) => {
          for (const part of slices(verifications.map(withoutKind), size)) {
            await insertVerificationEvents(tx, part);
            await turn();
          }
          for (const part of slices(decisions.map(withoutKind), size)) {
            await insertRatelimitEvents(tx, part);
            await turn();
          }
          for (const g of GRANULARITIES) {
            // Slices keep the rows' order, so the row locks are still taken in one order.
            for (const part of slices(rollups[g], size)) {
              await rollupAdd(tx, g, part);
              await turn();
            }
          }
        });
      } catch (err) {
        this.counts.failedFlushes++;
        this.log.warn(
          { err, buffered: this.events.length },
          "analytics events not written; will retry",
        );
        return false;
      }
      this.events.splice(0, batch.length);
      due -= batch.length;
      this.counts.written += batch.length;
      await this.lastUsed.write(verifications);
    }
    return true;
  }

  private async ensurePartitions(
    table: EventTable,
    batch: readonly { time: number }[],
  ): Promise<void> {
    const key = (t: number) => `${table}:${Math.floor(t / 86_400_000)}`;
    const times = batch.map((e) => e.time).filter((t) => !this.partitions.has(key(t)));
    if (times.length === 0) return;
    await ensureEventPartitions(this.db, table, times);
    for (const t of times) this.partitions.add(key(t));
  }
}

/** Lets the event loop run what is waiting (I/O first) before the next statement. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Consecutive pieces of at most `size` items. */
function* slices<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

function withoutKind<T extends { kind: string }>(e: T): Omit<T, "kind"> {
  const { kind: _, ...rest } = e;
  return rest;
}
