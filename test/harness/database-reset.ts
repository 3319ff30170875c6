import type { Db } from "../../src/storage/db.js";

// Emptying a used test database back to the migrated state, for the pools of databases a
// worker keeps (pglite-pool.ts, postgres-pool.ts): much cheaper than a new database per file.

/** The longest a reset may take; a database that cannot be emptied in time is replaced. */
export const RESET_TIMEOUT_MS = 15_000;

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

/** How a relation is named in a schema set. */
const key = (r: Relation) => `${r.relname}:${r.relkind}`;

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `relname:relkind` of every relation of the public schema: the migrated schema, as first opened. */
export async function schemaOf(db: Db): Promise<Set<string>> {
  return new Set((await relations(db)).map(key));
}

/**
 * Empties a database back to the migrated state: drops the tables made while serving (the
 * event partitions), deletes the rows of every table but the migration history. Returns false when the
 * schema changed otherwise (a test that altered it): such a database is not lent again.
 */
export async function resetToMigrated(db: Db, schema: Set<string>): Promise<boolean> {
  let now = await relations(db);
  const made = now.filter((r) => r.relkind === "r" && r.relispartition && !schema.has(key(r)));
  if (made.length > 0) {
    // Their indexes go with them.
    await db.exec(made.map((r) => `drop table ${quoted(r.relname)};`).join("\n"));
    now = await relations(db);
  }
  // Anything else that was made or is gone (an index, a table, a view): not reusable.
  if (now.length !== schema.size || !now.every((r) => schema.has(key(r)))) return false;
  const tables = now
    .filter((r) => (r.relkind === "r" || r.relkind === "p") && !r.relispartition)
    .map((r) => r.relname)
    .filter((name) => name !== "schema_migrations");
  // DELETE, not TRUNCATE: a truncate gives each table new files, which costs far more than
  // deleting the few rows a test file leaves. Foreign keys are not checked meanwhile (every
  // table is emptied, so none can be left dangling).
  await db.exec(
    [
      "set session_replication_role = replica;",
      ...tables.map((name) => `delete from ${quoted(name)};`),
      "set session_replication_role = default;",
    ].join("\n"),
  );
  return true;
}

/** `work`'s answer, or false when it fails or takes longer than RESET_TIMEOUT_MS. */
export async function withinResetTimeout(work: Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), RESET_TIMEOUT_MS);
  });
  const ok = await Promise.race([work.catch(() => false), late]);
  clearTimeout(timer);
  return ok;
}
