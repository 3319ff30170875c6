import { readFileSync } from "node:fs";
import { inject } from "vitest";
import { randomString } from "../../src/domain/random.js";
import type { Db, PoolBounds } from "../../src/storage/db.js";
import { openPglite } from "../../src/storage/pglite.js";
import { openPostgres } from "../../src/storage/postgres.js";
import { databaseUrl, type Engine, postgresUrl } from "./engine.js";

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
 * Creates a fresh database from the migrated template of the run (see global-setup.ts);
 * on PostgreSQL its pool has `bounds` (default 10 connections, no statement timeout).
 */
export async function createTestDatabase(
  engine: Engine,
  bounds: PoolBounds = { max: 10 },
): Promise<TestDatabase> {
  if (engine === "pglite") {
    pgliteDump ??= new Blob([readFileSync(inject("pgliteDumpPath"))]);
    const db = await openPglite({ loadDataDir: pgliteDump });
    return { db, engine, url: undefined, drop: () => db.close() };
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
