import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Db } from "./db.js";

/** A numbered SQL migration file, `NNNN_name.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/;
/** Arbitrary constant shared by every Latchkey process: serialises concurrent migrators. */
const MIGRATION_LOCK_ID = 727_274_001;

/** Reads the migration files in version order and checks they are numbered 1, 2, 3, ... */
export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  const migrations: Migration[] = [];
  for (const [i, file] of files.entries()) {
    const match = FILE_PATTERN.exec(file);
    if (!match) throw new Error(`migration file '${file}' is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== i + 1) throw new Error(`migration '${file}' breaks the sequence 1, 2, 3, ...`);
    migrations.push({
      version,
      name: match[2] as string,
      sql: await readFile(`${dir}/${file}`, "utf8"),
    });
  }
  return migrations;
}

/**
 * Applies every migration the database has not seen, forward only, in one transaction
 * under an advisory lock, so several processes starting at once apply each exactly once.
 * Refuses to run against a database migrated by a newer Latchkey.
 */
export async function migrate(db: Db, now: number): Promise<number[]> {
  const migrations = await loadMigrations();
  return db.transaction(async (tx) => {
    // A migration may rewrite a large table, and waits here while another process migrates:
    // the statement timeout of ordinary requests does not apply to it.
    await tx.query("select set_config('statement_timeout', '0', true)");
    await tx.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK_ID]);
    await tx.exec(
      "create table if not exists schema_migrations (version int primary key, name text not null, applied_at bigint not null)",
    );
    const rows = await tx.query<{ version: number }>("select version from schema_migrations");
    const applied = new Set(rows.map((r) => r.version));
    const newest = migrations.length;
    for (const v of applied) {
      if (v > newest) throw new Error(`database has migration ${v}; this Latchkey knows ${newest}`);
    }
    const done: number[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query(
        "insert into schema_migrations (version, name, applied_at) values ($1, $2, $3)",
        [m.version, m.name, now],
      );
      done.push(m.version);
    }
    if (db.engine === "pglite") await tx.exec(`drop index if exists ${RAW_EVENT_INDEXES}`);
    return done;
  });
}

/**
 * The indexes of the raw event tables serve only analytics queries over those tables. On PGlite
 * they would mostly cost: they double the time of each COPY of events (0.9-1.1 ms against
 * 0.4-0.6 ms for 100 rows), which holds its single connection, and the WAL the commit writes.
 * So the embedded engine drops them: an analytics query over a raw table scans it there, within
 * the analytics timeout. PostgreSQL keeps the schema of the migrations whole.
 */
const RAW_EVENT_INDEXES =
  "key_verifications_workspace_time, key_verifications_key_time, ratelimit_events_workspace_time";
