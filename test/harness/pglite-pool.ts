import { rmSync } from "node:fs";
import type { PgliteDb } from "../../src/storage/pglite.js";
import { resetToMigrated, schemaOf, withinResetTimeout } from "./database-reset.js";

/** One PGlite database of this worker process, lent to one test file at a time. */
interface Pooled {
  db: PgliteDb;
  dir: string;
  /** `relname:relkind` of every relation of the migrated schema, as first opened. */
  schema: Set<string>;
}

/** A database lent to a test file; `release` hands it back when the file is done with it. */
export interface PgliteLease {
  db: PgliteDb;
  release(): Promise<void>;
}

const idle: Pooled[] = [];

async function discard(entry: Pooled): Promise<void> {
  await entry.db.close().catch(() => {});
  rmSync(entry.dir, { recursive: true, force: true });
}

/** Resets an idle database within the deadline; false (and the database discarded) if not. */
async function resetOrDiscard(entry: Pooled): Promise<boolean> {
  const ok = await withinResetTimeout(resetToMigrated(entry.db, entry.schema));
  if (!ok) await discard(entry);
  return ok;
}

/**
 * Lends a migrated, empty PGlite database: one this worker used before (emptied just now,
 * after its last file's stragglers, if any, have run), or a new one from `open`. The lease's
 * database is the pooled one with two differences: its subscriptions end with the lease,
 * and a file that closes it takes it out of the pool.
 */
export async function leasePglite(
  open: () => Promise<{ db: PgliteDb; dir: string }>,
): Promise<PgliteLease> {
  let entry = idle.pop();
  while (entry && !(await resetOrDiscard(entry))) entry = idle.pop();
  if (!entry) {
    const opened = await open();
    entry = { ...opened, schema: await schemaOf(opened.db) };
  }
  const pooled = entry;
  const subscriptions = new Set<() => Promise<void>>();
  let closed = false;
  const db: PgliteDb = {
    ...pooled.db,
    async listen(channel, onMessage, onConnect) {
      const unlisten = await pooled.db.listen(channel, onMessage, onConnect);
      const once = async () => {
        if (subscriptions.delete(once)) await unlisten();
      };
      subscriptions.add(once);
      return once;
    },
    async close() {
      closed = true;
      await discard(pooled);
    },
  };
  return {
    db,
    async release() {
      if (closed) return;
      for (const unlisten of [...subscriptions]) await unlisten();
      // With a module graph per file (vitest.config.ts) nothing would lend it again.
      if (process.env.LATCHKEY_TEST_ISOLATE === "1") await discard(pooled);
      else idle.push(pooled);
    },
  };
}
