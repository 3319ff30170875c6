import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { randomString } from "../../src/domain/random.js";
import type { Db, PoolBounds } from "../../src/storage/db.js";
import { openPglite, type PgliteDb } from "../../src/storage/pglite.js";
import { openPostgres } from "../../src/storage/postgres.js";
import { databaseUrl, type Engine, postgresUrl } from "./engine.js";
import { leasePglite } from "./pglite-pool.js";

/** A fresh migrated database for one test file, and how to get rid of it. */
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
 * Creates a fresh database from the migrated template of the run (see global-setup.ts);
 * on PostgreSQL its pool has `bounds` (default 10 connections, no statement timeout). On
 * PGlite the database is one of this worker's, emptied back to the migrated state (see
 * pglite-pool.ts): booting PostgreSQL in WebAssembly is the larger part of a file's start.
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
  const name = `latchkey_t_${randomString(12).toLowerCase()}`;
  const admin = openPostgres({ url: postgresUrl, max: 1 });
  try {
    await admin.exec(`create database ${name} template ${inject("postgresTemplate")}`);
  } finally {
    await admin.close();
  }
  const url = databaseUrl(postgresUrl, name);
  const db = openPostgres({ url, max: bounds.max, statementTimeoutMs: bounds.statementTimeoutMs });
  return {
    db,
    engine,
    url,
    async drop() {
      await db.close();
      const a = openPostgres({ url: postgresUrl as string, max: 1 });
      try {
        await a.exec(`drop database if exists ${name} with (force)`);
      } finally {
        await a.close();
      }
    },
  };
}
