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

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /**
   * Writes the latest use (key id to Unix ms) of each key whose stored time is older than the
   * resolution.
   */
  async write(latest: ReadonlyMap<string, number>): Promise<void> {
    const due = [...latest]
      .filter(([id, time]) => time - (this.written.get(id) ?? -Infinity) >= LAST_USED_RESOLUTION_MS)
      .map(([id, time]) => ({ id, time }));
    if (due.length === 0) return;
    try {
      await keysTouch(this.db, due);
    } catch (err) {
      this.log.warn({ err, keys: due.length }, "lastUsedAt not written; the next use retries");
      return;
    }
    if (this.written.size + due.length > MAX_REMEMBERED) this.written.clear();
    for (const { id, time } of due) this.written.set(id, time);
  }
}
