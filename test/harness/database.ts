import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { randomString } from "../../src/domain/random.js";
import type { Db, PoolBounds } from "../../src/storage/db.js";
import { openPglite, type PgliteDb } from "../../src/storage/pglite.js";
import { openPostgres } from "../../src/storage/postgres.js";
import { databaseUrl, type Engine, postgresUrl } from "./engine.js";
import { leasePglite } from "./pglite-pool.js";
import { leasePostgres } from "./postgres-pool.js";

/** A migrated database with no rows for one test file, and how to hand it back. */
export interface TestDatabase {
  db: Db;
  engine: Engine;
  /** The PostgreSQL URL of this database (undefined on PGlite). */
  url: string | undefined;
  drop(): Promise<void>;
}

let pgliteDump: Blob | undefined;

/**
 * Opens a new PGlite database from the run's migrated dump, in the run's scratch folder (the
 * global setup removes the folder, so a database still open when a worker exits leaves
 * nothing behind).
 */
async function openFromDump(): Promise<{ db: PgliteDb; dir: string }> {
  pgliteDump ??= new Blob([readFileSync(inject("pgliteDumpPath"))]);
  const dir = join(inject("pgliteRunDir"), `db-${process.pid}-${randomString(8)}`);
  mkdirSync(dir, { recursive: true });
  try {
    return { db: await openPglite({ dataDir: dir, loadDataDir: pgliteDump }), dir };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * A migrated database with no rows for a test file: one of this worker's, emptied back to the
 * migrated state (pglite-pool.ts, postgres-pool.ts), or a new one from the run's migrated
 * dump or template (global-setup.ts). On PostgreSQL the file gets a pool of its own with
 * `bounds` (default 10 connections, no statement timeout).
 */
export async function createTestDatabase(
  engine: Engine,
  bounds: PoolBounds = { max: 10 },
): Promise<TestDatabase> {
  if (engine === "pglite") {
    const lease = await leasePglite(openFromDump);
    return { db: lease.db, engine, url: undefined, drop: lease.release };
  }
  if (!postgresUrl) throw new Error("TEST_DATABASE_URL is not set");
  const lease = await leasePostgres();
  const url = databaseUrl(postgresUrl, lease.name);
  const db = openPostgres({ url, max: bounds.max, statementTimeoutMs: bounds.statementTimeoutMs });
  return {
    db,
    engine,
    url,
    async drop() {
      await db.close();
      await lease.release();
    },
  };
}
