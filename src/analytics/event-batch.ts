import { Rollup } from "../domain/analytics/rollups.js";
import {
  type AnalyticsEvent,
  ratelimitRow,
  ratelimitsFromRows,
  verificationRow,
  verificationsFromRows,
} from "../storage/queries/events.js";
import { type ChunkPool, CsvRows } from "./csv-rows.js";

const DAY_MS = 86_400_000;

/**
 * Events that commit in one transaction, in the order recorded, with what the writer needs
 * of them worked out as they arrive: their rows already encoded for COPY (kept off the
 * JavaScript heap, see CsvRows), the rollup groups, each key's latest use and the days. So
 * starting to write a batch costs the server's thread next to nothing: working it all out at
 * flush time took 8-20 ms for 5,000 events, once a second, and every verification in flight
 * waited it out.
 */
export class Batch {
  readonly verifications: CsvRows;
  readonly decisions: CsvRows;
  readonly rollup = new Rollup();
  /** Key id to the latest time it was used in this batch. */
  readonly lastUsed = new Map<string, number>();
  /** Days (Unix ms / DAY_MS) of the verifications and of the rate-limit decisions. */
  readonly verificationDays = new Set<number>();
  readonly decisionDays = new Set<number>();
  /**
   * Failed writes of this batch whose cause is unclear: neither an outage nor a refusal of
   * its contents (see EventBuffer).
   */
  failures = 0;
  /** Set once the database refused the batch: it is written again in pieces. */
  pieces: Pieces | undefined;

  constructor(rowsPerSlice: number, pool: ChunkPool) {
    this.verifications = new CsvRows(rowsPerSlice, pool);
    this.decisions = new CsvRows(rowsPerSlice, pool);
  }

  /** A batch of these events. */
  static of(events: readonly AnalyticsEvent[], rowsPerSlice: number, pool: ChunkPool): Batch {
    const batch = new Batch(rowsPerSlice, pool);
    for (const e of events) batch.add(e);
    return batch;
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

  /**
   * The events of the batch, read back from its rows: verifications, then decisions. Only a
   * refused batch needs them, so they are not kept as objects meanwhile.
   */
  events(): AnalyticsEvent[] {
    const verifications = verificationsFromRows(this.verifications.slices());
    const decisions = ratelimitsFromRows(this.decisions.slices());
    return [
      ...verifications.map((e): AnalyticsEvent => ({ kind: "verification", ...e })),
      ...decisions.map((e): AnalyticsEvent => ({ kind: "ratelimit", ...e })),
    ];
  }

  release(): void {
    this.verifications.release();
    this.decisions.release();
  }
}

/**
 * A refused batch's events, cut in halves until every piece the database refuses holds one
 * event, so a bad event costs no other its place. Pieces are taken first to last; only the
 * ranges are held, and the one piece being written is encoded when it is written.
 */
export class Pieces {
  /** [from, to) of the events still to write, the next first. */
  private readonly ranges: [number, number][];
  /** Events already written or refused. */
  settled = 0;

  /** The events of a batch the database refused whole: its halves come first. */
  constructor(readonly events: readonly AnalyticsEvent[]) {
    this.ranges = events.length > 0 ? [[0, events.length]] : [];
    if (events.length > 1) this.halve();
  }

  /** The next piece to write, if any. */
  next(): readonly AnalyticsEvent[] | undefined {
    const range = this.ranges[0];
    return range && this.events.slice(range[0], range[1]);
  }

  /** The next piece is settled (written, or its one event refused). */
  done(): void {
    const [from, to] = this.ranges.shift() as [number, number];
    this.settled += to - from;
  }

  /** The next piece was refused: its halves take its place. Only for pieces of two or more. */
  halve(): void {
    const [from, to] = this.ranges.shift() as [number, number];
    const mid = from + Math.ceil((to - from) / 2);
    this.ranges.unshift([from, mid], [mid, to]);
  }
}
