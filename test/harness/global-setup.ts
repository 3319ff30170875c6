import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { migrate } from "../../src/storage/migrate.js";
import { openPglite, temporaryParent } from "../../src/storage/pglite.js";
import { openPostgres } from "../../src/storage/postgres.js";
import { databaseUrl, postgresUrl } from "./engine.js";

declare module "vitest" {
  export interface ProvidedContext {
    pgliteDumpPath: string;
    /** The run's folder for the PGlite databases of the test workers (removed at the end). */
    pgliteRunDir: string;
    postgresTemplate: string;
    /** How the names of the run's PostgreSQL test databases start (postgres-pool.ts). */
    postgresDatabasePrefix: string;
  }
}

const MIGRATIONS = new URL("../../src/storage/migrations/", import.meta.url).pathname;

/** A fingerprint of the migrations: templates are rebuilt when a migration changes. */
function migrationsHash(): string {
  const h = createHash("sha256");
  for (const f of readdirSync(MIGRATIONS).sort())
    h.update(f).update(readFileSync(join(MIGRATIONS, f)));
  return h.digest("hex").slice(0, 12);
}

/**
 * Migrates a database once per run and per engine, so each test file starts from a
 * copy instead of migrating: a PGlite dump loaded per file, a PostgreSQL template database.
 * Both are named for this run alone (two runs on one machine must not drop each other's
 * template) and removed when the run ends, as are the test databases made from them.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const hash = `${migrationsHash()}_${process.pid}`;
  const engine = project.config.env?.TEST_ENGINE ?? "pglite";
  if (engine === "pglite") {
    const dir = join(tmpdir(), "latchkey-test");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `pglite-${hash}.tar`);
    const runDir = join(temporaryParent(), `latchkey-test-${hash}`);
    mkdirSync(runDir, { recursive: true });
    const db = await openPglite({});
    await migrate(db, Date.now());
    writeFileSync(path, Buffer.from(await (await db.dump()).arrayBuffer()));
    await db.close();
    project.provide("pgliteDumpPath", path);
    project.provide("pgliteRunDir", runDir);
    project.provide("postgresTemplate", "");
    project.provide("postgresDatabasePrefix", "");
    return async () => {
      rmSync(path, { force: true });
      rmSync(runDir, { recursive: true, force: true });
    };
  }
  if (!postgresUrl) throw new Error("TEST_DATABASE_URL is required for the postgres project");
  const template = `latchkey_tpl_${hash}`;
  const admin = openPostgres({ url: postgresUrl, max: 1 });
  await admin.exec(`drop database if exists ${template} with (force)`);
  await admin.exec(`create database ${template}`);
  await admin.close();
  const db = openPostgres({ url: databaseUrl(postgresUrl, template), max: 1 });
  await migrate(db, Date.now());
  await db.close();
  project.provide("pgliteDumpPath", "");
  project.provide("pgliteRunDir", "");
  project.provide("postgresTemplate", template);
  const prefix = `latchkey_t_${hash}_`;
  project.provide("postgresDatabasePrefix", prefix);
  return async () => {
    const a = openPostgres({ url: postgresUrl as string, max: 1 });
    try {
      // The workers keep their databases to the end (postgres-pool.ts): all of them go here.
      const made = await a.query<{ name: string }>(
        "select datname as name from pg_database where starts_with(datname, $1)",
        [prefix],
      );
      for (const { name } of made) await a.exec(`drop database if exists ${name} with (force)`);
      await a.exec(`drop database if exists ${template} with (force)`);
    } finally {
      await a.close();
    }
  };
}
