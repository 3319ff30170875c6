import type { Logger } from "../log.js";
import type { Db } from "../storage/db.js";
import { keysTouch } from "../storage/queries/keys.js";

/** How stale a key's `lastUsedAt` may be: the time between two writes for one key. */
export const LAST_USED_RESOLUTION_MS = 60_000;
/** Keys remembered at most; forgetting one only costs an extra write. */
const MAX_REMEMBERED = 100_000;

/**
 * Keeps `keys.last_used_at` current within a minute from the verification events, writing
 * each key at most once a minute per process, so a hot key does not turn every flush into
 * an update of its row.
 */
export class LastUsedWriter {
  private readonly written = new Map<string, number>();
  /** Uses whose write failed: tried again with the next write (a key used once would
   * otherwise keep a stale lastUsedAt for good). */
  private readonly failed = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** True when uses are waiting for a write that failed to be tried again. */
  get pending(): boolean {
    return this.failed.size > 0;
  }

  /**
   * Writes the latest use (key id to Unix ms) of each key whose stored time is older than the
   * resolution, with the uses a failed write left behind.
   */
  async write(latest: ReadonlyMap<string, number>): Promise<void> {
    const candidates = new Map(this.failed);
    for (const [id, time] of latest) {
      if ((candidates.get(id) ?? -Infinity) < time) candidates.set(id, time);
    }
    const due = [...candidates]
      .filter(([id, time]) => time - (this.written.get(id) ?? -Infinity) >= LAST_USED_RESOLUTION_MS)
      .map(([id, time]) => ({ id, time }));
    if (due.length === 0) return;
    try {
      await keysTouch(this.db, due);
    } catch (err) {
      this.log.warn({ err, keys: due.length }, "lastUsedAt not written; will retry");
      if (this.failed.size + due.length <= MAX_REMEMBERED) {
        for (const { id, time } of due) this.failed.set(id, time);
      }
      return;
    }
    this.failed.clear();
    if (this.written.size + due.length > MAX_REMEMBERED) this.written.clear();
    for (const { id, time } of due) this.written.set(id, time);
  }
}
