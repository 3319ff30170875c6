import { Rollup } from "../domain/analytics/rollups.js";
import { GRANULARITIES } from "../domain/analytics/tables.js";
import type { Logger } from "../log.js";
import { type Db, isUnavailable } from "../storage/db.js";
import {
  type AnalyticsEvent,
  copyRatelimitRows,
  copyVerificationRows,
  type EventTable,
  ensureEventPartitions,
  ratelimitRow,
  verificationRow,
} from "../storage/queries/events.js";
import { rollupAdd } from "../storage/queries/rollups.js";
import { ChunkPool, CsvRows } from "./csv-rows.js";
import { LastUsedWriter } from "./last-used.js";

/** Sizing of the buffer. */
export interface EventBufferOptions {
  /** Events held at most; beyond, new events are dropped (and counted). */
  maxEvents: number;
  /**
   * Bytes of encoded rows held at most (give or take one row); beyond, new events are
   * dropped too. A verification may carry 20 tags of 512 characters, so a count alone
   * would let a flood of such events, while the database is down, take gigabytes.
   */
  maxBytes: number;
  /** How often the buffer is written out. */
  flushIntervalMs: number;
  /** Events per transaction: the raw rows and the rollups of these events commit together. */
  batchSize: number;
  /**
   * Rows per statement within a transaction. Between statements the writer gives the event
   * loop a turn, so on PGlite (which runs on the server's thread) a flush stalls requests
   * for one slice at a time (~1 ms at 100 rows) instead of for the whole batch.
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

const DAY_MS = 86_400_000;
/** Refusals of one batch by a database that answers, before the batch is dropped. */
const MAX_REJECTIONS = 3;
/** How often `stop` tries again to write while the database fails. */
const STOP_RETRY_MS = 200;

/**
 * Events that commit in one transaction, in the order recorded, with what the writer needs
 * of them worked out as they arrive: their rows already encoded for COPY (kept off the
 * JavaScript heap, see CsvRows), the rollup groups, each key's latest use and the days. So
 * starting to write a batch costs the server's thread next to nothing: working it all out at
 * flush time took 8-20 ms for 5,000 events, once a second, and every verification in flight
 * waited it out.
 */
class Batch {
  readonly verifications: CsvRows;
  readonly decisions: CsvRows;
  readonly rollup = new Rollup();
  /** Key id to the latest time it was used in this batch. */
  readonly lastUsed = new Map<string, number>();
  /** Days (Unix ms / DAY_MS) of the verifications and of the rate-limit decisions. */
  readonly verificationDays = new Set<number>();
  readonly decisionDays = new Set<number>();
  /** Failed writes of this batch while the database answered (a bad batch, not an outage). */
  rejections = 0;

  constructor(rowsPerSlice: number, pool: ChunkPool) {
    this.verifications = new CsvRows(rowsPerSlice, pool);
    this.decisions = new CsvRows(rowsPerSlice, pool);
  }

  get size(): number {
    return this.verifications.rows + this.decisions.rows;
  }

  /** Memory held for the rows (whole chunks): what EVENT_BUFFER_BYTES bounds. */
  get bytes(): number {
    return this.verifications.held + this.decisions.held;
  }

  add(event: AnalyticsEvent): void {
    if (event.kind === "ratelimit") {
      this.decisions.add(ratelimitRow(event));
      this.decisionDays.add(Math.floor(event.time / DAY_MS));
      return;
    }
    this.verifications.add(verificationRow(event));
    this.verificationDays.add(Math.floor(event.time / DAY_MS));
    this.rollup.add(event);
    if (event.keyId !== null && (this.lastUsed.get(event.keyId) ?? -1) < event.time) {
      this.lastUsed.set(event.keyId, event.time);
    }
  }

  release(): void {
    this.verifications.release();
    this.decisions.release();
  }
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
  /** Oldest first; events are recorded into the last one until it is full or a pass starts. */
  private readonly batches: Batch[] = [];
  private open: Batch | undefined;
  private buffered = 0;
  private bufferedBytes = 0;
  private readonly counts: EventCounts = { recorded: 0, dropped: 0, written: 0, failedFlushes: 0 };
  /** Events ever accepted into batches, and of those, how many were written or given up. */
  private accepted = 0;
  private settled = 0;
  private readonly partitions = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<boolean> | undefined;
  private readonly lastUsed: LastUsedWriter;
  private readonly pool = new ChunkPool();
  /** Set once `stop` is done: later events are dropped, late writes no longer count. */
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly options: EventBufferOptions,
    private readonly log: Logger,
  ) {
    this.lastUsed = new LastUsedWriter(db, log);
  }

  /** Buffers an event, or counts it as dropped when the buffer is full. */
  record(event: AnalyticsEvent): void {
    if (
      this.closed ||
      this.buffered >= this.options.maxEvents ||
      this.bufferedBytes >= this.options.maxBytes
    ) {
      this.counts.dropped++;
      return;
    }
    if (this.open === undefined || this.open.size >= this.options.batchSize) {
      this.open = new Batch(this.options.sliceSize, this.pool);
      this.batches.push(this.open);
    }
    const before = this.open.bytes;
    this.open.add(event);
    this.bufferedBytes += this.open.bytes - before;
    this.buffered++;
    this.counts.recorded++;
    this.accepted++;
  }

  /** A copy of the counters. */
  stats(): EventCounts & { buffered: number; bufferedBytes: number } {
    return { ...this.counts, buffered: this.buffered, bufferedBytes: this.bufferedBytes };
  }

  start(): void {
    this.timer = setInterval(() => void this.pass(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /**
   * Stops the timer and writes out everything buffered, including events recorded while it
   * runs (a request answered during the stop). While the database fails, it tries again every
   * STOP_RETRY_MS for up to `retryForMs` (a restarting PostgreSQL during a deploy), and a
   * write that hangs (a vanished host) is given up at that time too. What it cannot write is
   * then lost with the process: counted as dropped and logged, so written + dropped still
   * accounts for every event offered. Events offered after the stop are dropped.
   */
  async stop(retryForMs = 0): Promise<void> {
    clearInterval(this.timer);
    const until = performance.now() + retryForMs;
    while (this.buffered > 0) {
      const attempt = this.flush();
      const written =
        retryForMs > 0 ? await within(attempt, until - performance.now()) : await attempt;
      if (written) continue;
      const left = until - performance.now();
      if (left <= 0) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(STOP_RETRY_MS, left)));
    }
    this.closed = true;
    if (this.buffered > 0) this.abandon();
  }

  /**
   * Gives up the buffered events: they move from recorded to dropped. A write still in flight
   * no longer counts (it may land; the process is exiting).
   */
  private abandon(): void {
    const lost = this.buffered;
    // Not released: a write still in flight reads its batch's rows to the end, so it commits
    // whole or not at all (released, it would stop early and commit all the rollups).
    this.batches.length = 0;
    this.open = undefined;
    this.counts.recorded -= lost;
    this.counts.dropped += lost;
    this.settled += lost;
    this.buffered = 0;
    this.bufferedBytes = 0;
    this.log.error({ lost }, "analytics events lost at shutdown: the database cannot be reached");
  }

  /**
   * Writes out every event recorded before this call, also when a timer's pass that started
   * earlier is still running. Resolves false when the database failed; the events stay
   * buffered for a later flush.
   */
  async flush(): Promise<boolean> {
    const upTo = this.accepted;
    while (this.settled < upTo) {
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
    // Events recorded from now on go to a new batch, for the next pass.
    this.open = undefined;
    for (let due = this.batches.length; due > 0; due--) {
      const batch = this.batches[0] as Batch;
      try {
        await this.write(batch);
        if (this.closed) return false; // given up by stop meanwhile: counted as dropped
      } catch (err) {
        this.counts.failedFlushes++;
        // A partition dropped meanwhile (retention) would fail every later COPY for its day.
        this.partitions.clear();
        if (!this.closed && !isUnavailable(err) && ++batch.rejections >= MAX_REJECTIONS) {
          // The database answers but refuses this batch, again and again: holding it would
          // stop every later event of every workspace behind it.
          this.log.error(
            { err, events: batch.size },
            "analytics events dropped: the database refuses their batch",
          );
          this.remove(batch);
          this.counts.recorded -= batch.size;
          this.counts.dropped += batch.size;
          continue;
        }
        this.log.warn({ err, buffered: this.buffered }, "analytics events not written; will retry");
        // Events recorded from now on join the last batch again, rather than each pass
        // starting a batch of its own (a chunk of memory each) while the database is away;
        // not one the database has refused (it may be dropped).
        const last = this.batches.at(-1);
        if (!this.closed && last && last.size < this.options.batchSize && last.rejections === 0)
          this.open = last;
        return false;
      }
      this.remove(batch);
      this.counts.written += batch.size;
      await this.lastUsed.write(batch.lastUsed);
    }
    if (this.lastUsed.pending) await this.lastUsed.write(new Map());
    return true;
  }

  /** Takes the oldest batch out of the buffer, settled (written or given up). */
  private remove(batch: Batch): void {
    this.batches.shift();
    this.buffered -= batch.size;
    this.bufferedBytes -= batch.bytes;
    this.settled += batch.size;
    batch.release();
  }

  /** One batch in one transaction, a slice of rows per statement with a turn in between. */
  private async write(batch: Batch): Promise<void> {
    await this.ensurePartitions("key_verifications", batch.verificationDays);
    await this.ensurePartitions("ratelimit_events", batch.decisionDays);
    await this.ensurePartitions("verifications_per_minute", batch.verificationDays);
    // The raw events and the rollups commit together, so a retry after a failure writes no
    // duplicates and the rollups always agree with the raw tables.
    const rollups = batch.rollup.rows();
    const size = this.options.sliceSize;
    await this.db.transaction(async (tx) => {
      for (const rows of batch.verifications.slices()) {
        await copyVerificationRows(tx, rows);
        await turn();
      }
      for (const rows of batch.decisions.slices()) {
        await copyRatelimitRows(tx, rows);
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

/** `attempt`'s result, or false once `ms` have passed without one. */
function within(attempt: Promise<boolean>, ms: number): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(false);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([attempt, late]).finally(() => clearTimeout(timer));
}

/** Lets the event loop run what is waiting (I/O first) before the next statement. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Consecutive pieces of at most `size` items. */
function* slices<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
