import type { Logger } from "../log.js";
import type { Db } from "../storage/db.js";
import type { AnalyticsEvent } from "../storage/queries/events.js";
import { BatchWriter } from "./batch-writer.js";
import { ChunkPool } from "./csv-rows.js";
import { Batch, Pieces } from "./event-batch.js";
import { LastUsedWriter } from "./last-used.js";
import { RefusalLog, writeFailure } from "./refusals.js";

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
   * Rows per statement within a transaction (see eventRowsPerStatement). Between statements
   * the writer gives the event loop a turn, and the statements of a timer's pass are spread
   * over its interval, so the database's work arrives in pieces instead of all at once.
   */
  sliceSize: number;
  /**
   * How long a timer's pass may spread its write over (see BatchWriter); half the flush
   * interval when not given, so a pass ends well before the next one is due.
   */
  spreadMs?: number;
}

/** Counters of the buffer: `recorded + dropped` is every event offered. */
export interface EventCounts {
  recorded: number;
  dropped: number;
  written: number;
  failedFlushes: number;
  /** Events the database refused (each alone, see EventBuffer); also counted in `dropped`. */
  rejected: number;
}

/**
 * Failed writes of one batch, with a cause that is neither an outage nor a refusal of its
 * rows, before the batch is treated as refused (and written in pieces).
 */
const MAX_UNCLEAR_FAILURES = 3;
/** How often `stop` tries again to write while the database fails. */
const STOP_RETRY_MS = 200;

/**
 * A bounded in-memory buffer of analytics events (verifications and rate-limit decisions),
 * written to PostgreSQL in batches off the request path: `record` never waits and never
 * fails. When the database is down the events stay buffered (up to the bound) and go out
 * with a later flush. `stop` flushes. A crash loses at most what was buffered (about one
 * flush interval). Each batch also adds its verifications to the minute, hour, day and month
 * rollups, in the same transaction, and moves keys' lastUsedAt.
 *
 * An event the database refuses (a value it cannot store) costs no other event its place: a
 * refused batch is written again in pieces until the refused event stands alone, and only
 * that one is dropped, counted as `rejected` (and `dropped`) and logged at most once a minute.
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
  private readonly counts: EventCounts = {
    recorded: 0,
    dropped: 0,
    written: 0,
    failedFlushes: 0,
    rejected: 0,
  };
  /** Events ever accepted into batches, and of those, how many were written or given up. */
  private accepted = 0;
  private settled = 0;
  private readonly writer: BatchWriter;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<boolean> | undefined;
  private readonly lastUsed: LastUsedWriter;
  private readonly pool = new ChunkPool();
  private readonly refusals: RefusalLog;
  /** Set once `stop` is done: later events are dropped, late writes no longer count. */
  private closed = false;

  constructor(
    db: Db,
    private readonly options: EventBufferOptions,
    private readonly log: Logger,
  ) {
    this.lastUsed = new LastUsedWriter(db, log);
    this.writer = new BatchWriter(db, options.sliceSize);
    this.refusals = new RefusalLog(log);
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
    this.timer = setInterval(() => void this.pass(true), this.options.flushIntervalMs);
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
    // A caller waits for these events: a timer's pass in progress stops spreading its write.
    this.writer.hurry();
    while (this.settled < upTo) {
      if (!(await this.pass())) return false;
    }
    return true;
  }

  /**
   * One pass over the events buffered when it starts; concurrent callers share it. A timer's
   * pass (`spread`) that finds one batch due, the buffer keeping up, spreads its write over
   * `spreadMs` (see BatchWriter); with more due it writes them without pause, to catch up.
   */
  private pass(spread = false): Promise<boolean> {
    const spreadMs =
      spread && this.batches.length === 1
        ? (this.options.spreadMs ?? this.options.flushIntervalMs / 2)
        : 0;
    this.flushing ??= this.writeAll(spreadMs).finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeAll(spreadMs: number): Promise<boolean> {
    // Events recorded from now on go to a new batch, for the next pass.
    this.open = undefined;
    for (let due = this.batches.length; due > 0; due--) {
      const batch = this.batches[0] as Batch;
      try {
        await this.writeBatch(batch, spreadMs);
        if (this.closed) return false; // given up by stop meanwhile: counted as dropped
      } catch (err) {
        this.counts.failedFlushes++;
        this.log.warn({ err, buffered: this.buffered }, "analytics events not written; will retry");
        // Events recorded from now on join the last batch again, rather than each pass
        // starting a batch of its own (a chunk of memory each) while the database is away;
        // not one that failed otherwise (it may be written in pieces).
        const last = this.batches.at(-1);
        if (
          !this.closed &&
          last &&
          last.size < this.options.batchSize &&
          last.failures === 0 &&
          last.pieces === undefined
        )
          this.open = last;
        return false;
      }
      this.remove(batch);
      await this.lastUsed.write(batch.lastUsed);
    }
    if (this.lastUsed.pending) await this.lastUsed.write(new Map());
    return true;
  }

  /**
   * Writes a batch in one transaction or, once the database has refused it, in pieces (see
   * writePieces). Throws, leaving the batch buffered, while the database cannot be reached
   * or fails for an unclear reason fewer than MAX_UNCLEAR_FAILURES times.
   */
  private async writeBatch(batch: Batch, spreadMs: number): Promise<void> {
    if (batch.pieces === undefined) {
      try {
        await this.writer.write(batch, spreadMs);
        if (!this.closed) this.settle(batch.size, "written");
        return;
      } catch (err) {
        const failure = writeFailure(err);
        if (this.closed || failure === "outage") throw err;
        if (failure === "unclear" && ++batch.failures < MAX_UNCLEAR_FAILURES) throw err;
        // The database answers but refuses something in this batch. Holding the batch would
        // stop every later event of every workspace behind it, and dropping it would lose
        // every event in it for one bad one.
        batch.pieces = new Pieces(batch.events());
      }
    }
    await this.writePieces(batch.pieces);
  }

  /**
   * Writes a refused batch piece by piece, each in its own transaction: a refused piece is
   * cut in halves, and a refused piece of one event is that event's fault. It is dropped,
   * counted (`rejected`) and logged (RefusalLog). An outage meanwhile ends the pass; the
   * pieces left are written by a later one.
   */
  private async writePieces(pieces: Pieces): Promise<void> {
    for (let events = pieces.next(); events && !this.closed; events = pieces.next()) {
      const piece = Batch.of(events, this.options.sliceSize, this.pool);
      try {
        await this.writer.write(piece);
        if (this.closed) return;
        pieces.done();
        this.settle(events.length, "written");
      } catch (err) {
        if (this.closed || writeFailure(err) === "outage") throw err;
        if (events.length > 1) {
          pieces.halve();
          continue;
        }
        pieces.done();
        this.settle(1, "rejected");
        this.refusals.refused(err, events[0] as AnalyticsEvent);
      } finally {
        piece.release();
      }
    }
  }

  /** Counts `n` buffered events as written, or as refused by the database (dropped). */
  private settle(n: number, how: "written" | "rejected"): void {
    this.buffered -= n;
    this.settled += n;
    if (how === "written") {
      this.counts.written += n;
      return;
    }
    this.counts.recorded -= n;
    this.counts.dropped += n;
    this.counts.rejected += n;
  }

  /** Takes the oldest batch, all of its events settled, out of the buffer. */
  private remove(batch: Batch): void {
    this.batches.shift();
    this.bufferedBytes -= batch.bytes;
    batch.release();
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
