import type { Queryable } from "../../src/storage/db.js";

/**
 * Every row of every table, to prove that a rejected request wrote nothing. Analytics event
 * tables and their rollups are left out, and so is a key's `last_used_at`: the event writer writes both in the
 * background, on its timer, for verifications made before the snapshot; so are the cursors of
 * the webhook passes, moved by a timer as credits move.
 */
export type Snapshot = Record<string, unknown[]>;

/** The tables a snapshot reads: the public schema's, less the migrations and the event tables. */
function snapshotTables(db: Queryable): Promise<{ name: string }[]> {
  // The catalog itself rather than information_schema.tables (the same tables: a base table
  // is an ordinary or partitioned one), which costs several times more per call.
  return db.query<{ name: string }>(
    `select c.relname as name
     from pg_class c
     join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public'
       and c.relkind in ('r', 'p')
       and c.relname <> 'schema_migrations'
       and c.relname not like 'key_verifications%'
       and c.relname not like 'ratelimit_events%'
       and c.relname not like 'verifications_per_%'
       and c.relname <> 'webhook_cursors'
     order by c.relname`,
  );
}

/** Columns written in the background, by table: not part of what a request wrote. */
const BACKGROUND_COLUMNS: Readonly<Record<string, string>> = { keys: "last_used_at" };

/** A row of `table` (alias x) as jsonb text, less its background column. */
function rowText(table: string): string {
  const column = BACKGROUND_COLUMNS[table];
  return column ? `(to_jsonb(x) - '${column}')::text` : "to_jsonb(x)::text";
}

/** Reads all rows of all tables of the public schema (migrations bookkeeping excluded). */
export async function snapshot(db: Queryable): Promise<Snapshot> {
  const tables = await snapshotTables(db);
  const out: Snapshot = {};
  if (tables.length === 0) return out;
  // One statement for all tables rather than one per table (suites snapshot around every
  // call): each row as its jsonb text, which is what the diff compares.
  const rows = await db.query<{ t: string; r: string }>(
    tables
      .map(({ name }) => `select '${name}' as t, ${rowText(name)} as r from ${name} x`)
      .join(" union all "),
  );
  for (const { name } of tables) out[name] = [];
  for (const { t, r } of rows) out[t]?.push(r);
  for (const list of Object.values(out)) list.sort();
  return out;
}

/** The tables whose rows differ between two snapshots, with added and removed rows. */
export function diffSnapshots(
  before: Snapshot,
  after: Snapshot,
): Record<string, { added: unknown[]; removed: unknown[] }> {
  const diff: Record<string, { added: unknown[]; removed: unknown[] }> = {};
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = new Set((before[table] ?? []) as string[]);
    const b = new Set((after[table] ?? []) as string[]);
    const added = [...b].filter((r) => !a.has(r)).map((r) => JSON.parse(r));
    const removed = [...a].filter((r) => !b.has(r)).map((r) => JSON.parse(r));
    if (added.length > 0 || removed.length > 0) diff[table] = { added, removed };
  }
  return diff;
}

/** A row's 64-bit hash; through its text when a background column must be left out. */
function rowHash(table: string): string {
  return BACKGROUND_COLUMNS[table]
    ? `hashtextextended(${rowText(table)}, 0)`
    : "hash_record_extended(x, 0)";
}

/** Per table of a snapshot, its row count and a digest of its rows (in any order). */
export type Fingerprint = Record<string, string>;

/**
 * What `snapshot` reads, digested inside the database: per table, its row count and the sum of
 * its rows' 64-bit hashes (hash_record_extended hashes a row by its columns' own hash
 * functions, so two rows hash alike when their values are equal). A changed, added or
 * removed row changes the digest but for a chance of 2^-64, as strict as comparing the rows
 * themselves, for a fraction of the cost when a test compares the state around every call:
 * rendering each row as text (to_jsonb) and hashing that took several times longer.
 */
export async function fingerprint(db: Queryable): Promise<Fingerprint> {
  const tables = await snapshotTables(db);
  if (tables.length === 0) return {};
  const rows = await db.query<{ t: string; f: string }>(
    tables
      .map(
        ({ name }) =>
          `select '${name}' as t, count(*) || ':' || coalesce(sum(${rowHash(name)}), 0) as f from ${name} x`,
      )
      .join(" union all "),
  );
  return Object.fromEntries(rows.map(({ t, f }) => [t, f]));
}

/** The tables whose fingerprints differ. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((t) => before[t] !== after[t])
    .sort();
}
