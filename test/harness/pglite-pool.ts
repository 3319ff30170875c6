import { rmSync } from "node:fs";
import type { Db } from "../../src/storage/db.js";
import type { PgliteDb } from "../../src/storage/pglite.js";

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

/** The longest a reset may take; a database that cannot be emptied in time is replaced. */
const RESET_TIMEOUT_MS = 15_000;

const idle: Pooled[] = [];

interface Relation {
  relname: string;
  relkind: string;
  relispartition: boolean;
}

function relations(db: Db): Promise<Relation[]> {
  return db.query<Relation>(
    `select c.relname, c.relkind::text as relkind, c.relispartition
       from pg_class c
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public'`,
  );
}

/** How a relation is named in `Pooled.schema`. */
const key = (r: Relation) => `${r.relname}:${r.relkind}`;

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Empties a database back to the migrated state: drops the tables made while serving (the
 * event partitions), deletes the rows of every table but the migration history. Returns false when the
 * schema changed otherwise (a test that altered it): such a database is not lent again.
 */
async function reset(entry: Pooled): Promise<boolean> {
  let now = await relations(entry.db);
  const made = now.filter(
    (r) => r.relkind === "r" && r.relispartition && !entry.schema.has(key(r)),
  );
  if (made.length > 0) {
    // Their indexes go with them.
    await entry.db.exec(made.map((r) => `drop table ${quoted(r.relname)};`).join("\n"));
    now = await relations(entry.db);
  }
  // Anything else that was made or is gone (an index, a table, a view): not reusable.
  if (now.length !== entry.schema.size || !now.every((r) => entry.schema.has(key(r)))) return false;
  const tables = now
    .filter((r) => (r.relkind === "r" || r.relkind === "p") && !r.relispartition)
    .map((r) => r.relname)
    .filter((name) => name !== "schema_migrations");
  // DELETE, not TRUNCATE: a truncate gives each table new files, which costs far more than
  // deleting the few rows a test file leaves. Foreign keys are not checked meanwhile (every
  // table is emptied, so none can be left dangling).
  await entry.db.exec(
    [
      "set session_replication_role = replica;",
      ...tables.map((name) => `delete from ${quoted(name)};`),
      "set session_replication_role = default;",
    ].join("\n"),
  );
  return true;
}

async function discard(entry: Pooled): Promise<void> {
  await entry.db.close().catch(() => {});
  rmSync(entry.dir, { recursive: true, force: true });
}

/** Resets an idle database within the deadline; false (and the database discarded) if not. */
async function resetOrDiscard(entry: Pooled): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), RESET_TIMEOUT_MS);
  });
  const ok = await Promise.race([reset(entry).catch(() => false), late]);
  clearTimeout(timer);
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
    const schema = new Set((await relations(opened.db)).map(key));
    entry = { ...opened, schema };
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
