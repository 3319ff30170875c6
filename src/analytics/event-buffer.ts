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
  /** Events per insert statement. */
  batchSize: number;
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
 * written to PostgreSQL in batches off the request path: `record` never waits and never fails. When the database is down the
 * events stay buffered (up to the bound) and go out with a later flush. `stop` flushes.
 * A crash loses at most what was buffered (about one flush interval). Each flush also adds
 * the verifications to the minute, hour, day and month rollups and moves keys' lastUsedAt.
 */
export class EventBuffer {
  private events: AnalyticsEvent[] = [];
  private readonly counts: EventCounts = { recorded: 0, dropped: 0, written: 0, failedFlushes: 0 };
  private readonly partitions = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
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
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes out everything buffered. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Writes out the buffer; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    while (this.events.length > 0) {
      const batch = this.events.slice(0, this.options.batchSize);
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
        await this.db.transaction(async (tx) => {
          await insertVerificationEvents(tx, verifications.map(withoutKind));
          await insertRatelimitEvents(tx, decisions.map(withoutKind));
          for (const g of GRANULARITIES) await rollupAdd(tx, g, rollups[g]);
        });
      } catch (err) {
        this.counts.failedFlushes++;
        this.log.warn(
          { err, buffered: this.events.length },
          "analytics events not written; will retry",
        );
        return;
      }
      this.events.splice(0, batch.length);
      this.counts.written += batch.length;
      await this.lastUsed.write(verifications);
    }
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

function withoutKind<T extends { kind: string }>(e: T): Omit<T, "kind"> {
  const { kind: _, ...rest } = e;
  return rest;
}
