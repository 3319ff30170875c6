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
 * Writes one batch of events in one transaction: its raw rows and its rollup groups commit
 * together, so a retry after a failure writes no duplicates and the rollups always agree
 * with the raw tables. A slice of rows per statement, with a turn of the event loop between
 * statements (on PGlite the database runs on the server's thread).
 */
export class BatchWriter {
  /** `table:day` of the daily partitions known to exist. */
  private readonly partitions = new Set<string>();

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
  async write(batch: Batch): Promise<void> {
    try {
      await this.writeOnce(batch);
    } catch (err) {
      if (!VALUE_REFUSED.has(errorCode(err)?.slice(0, 2) ?? "")) this.partitions.clear();
      throw err;
    }
  }

  private async writeOnce(batch: Batch): Promise<void> {
    await this.ensurePartitions("key_verifications", batch.verificationDays);
    await this.ensurePartitions("ratelimit_events", batch.decisionDays);
    await this.ensurePartitions("verifications_per_minute", batch.verificationDays);
    const rollups = batch.rollup.rows();
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
        for (const part of slices(rollups[g], this.sliceSize)) {
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

/** Lets the event loop run what is waiting (I/O first) before the next statement. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Consecutive pieces of at most `size` items. */
function* slices<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
