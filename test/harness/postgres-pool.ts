import { inject } from "vitest";
import { randomString } from "../../src/domain/random.js";
import type { Db } from "../../src/storage/db.js";
import { openPostgres } from "../../src/storage/postgres.js";
import { resetToMigrated, schemaOf, withinResetTimeout } from "./database-reset.js";
import { databaseUrl, postgresUrl } from "./engine.js";

// The PostgreSQL databases of this worker process, each lent to one test file at a time and
// emptied back to the migrated state when the next file takes it, as pglite-pool.ts does for
// PGlite: creating a database from the template and dropping it again cost more than a
// second per file, far more than most files' tests. The run's global setup drops them all at
// the end (their names start with the run's prefix).

/** One database of this worker. */
interface Pooled {
  name: string;
  /** Its migrated schema, as first created (see database-reset.ts). */
  schema: Set<string>;
}

const idle: Pooled[] = [];

function server(): string {
  if (!postgresUrl) throw new Error("TEST_DATABASE_URL is not set");
  return postgresUrl;
}

/** Runs `work` on one connection to `database` (the server's own database by default). */
async function on<T>(database: string | undefined, work: (db: Db) => Promise<T>): Promise<T> {
  const url = database === undefined ? server() : databaseUrl(server(), database);
  const db = openPostgres({ url, max: 1 });
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

async function create(): Promise<Pooled> {
  const name = `${inject("postgresDatabasePrefix")}${randomString(8).toLowerCase()}`;
  await on(undefined, (a) =>
    a.exec(`create database ${name} template ${inject("postgresTemplate")}`),
  );
  return { name, schema: await on(name, schemaOf) };
}

async function drop(entry: Pooled): Promise<void> {
  await on(undefined, (a) => a.exec(`drop database if exists ${entry.name} with (force)`));
}

/**
 * Empties an idle database within the deadline; false (and the database dropped) if not.
 * Sessions the last file left behind (a process it started, a pool it did not close) are
 * ended first, as dropping the database used to end them: none of them can write into the
 * next file's data.
 */
async function resetOrDrop(entry: Pooled): Promise<boolean> {
  const ok = await withinResetTimeout(
    on(entry.name, async (db) => {
      await db.query(
        `select pg_terminate_backend(pid, 10000) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()`,
      );
      return resetToMigrated(db, entry.schema);
    }),
  );
  if (!ok) await drop(entry).catch(() => {});
  return ok;
}

/**
 * Lends a migrated, empty PostgreSQL database: one this worker used before, emptied just now,
 * or a new one from the run's template. `release` hands it back when the file is done with it
 * (after closing its own pools).
 */
export async function leasePostgres(): Promise<{ name: string; release(): Promise<void> }> {
  let entry = idle.pop();
  while (entry && !(await resetOrDrop(entry))) entry = idle.pop();
  const leased = entry ?? (await create());
  let released = false;
  return {
    name: leased.name,
    async release() {
      // Once: a database in the idle list twice would be lent to two files.
      if (released) return;
      released = true;
      // With a module graph per file (vitest.config.ts) nothing would lend it again.
      if (process.env.LATCHKEY_TEST_ISOLATE === "1") await drop(leased);
      else idle.push(leased);
    },
  };
}
