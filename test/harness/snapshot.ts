import type { Queryable } from "../../src/storage/db.js";

/**
 * Every row of every table, to prove that a rejected request wrote nothing. Analytics event
 * tables are left out: events are written asynchronously, by a timer, whatever the request.
 */
export type Snapshot = Record<string, unknown[]>;

/** The tables a snapshot reads: the public schema's, less the migrations and the event tables. */
function snapshotTables(db: Queryable): Promise<{ name: string }[]> {
  return db.query<{ name: string }>(
    `select table_name as name
     from information_schema.tables
     where table_schema = 'public'
       and table_type = 'BASE TABLE'
       and table_name <> 'schema_migrations'
       and table_name not like 'key_verifications%'
       and table_name not like 'ratelimit_events%'
     order by table_name`,
  );
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
      .map(({ name }) => `select '${name}' as t, to_jsonb(x)::text as r from ${name} x`)
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

/** Per table of a snapshot, its row count and a digest of its rows (in any order). */
export type Fingerprint = Record<string, string>;

/**
 * What `snapshot` reads, digested inside the database: as strict about any change to any row,
 * for a fraction of the cost when a test compares the state around every call.
 */
export async function fingerprint(db: Queryable): Promise<Fingerprint> {
  const tables = await snapshotTables(db);
  if (tables.length === 0) return {};
  const rows = await db.query<{ t: string; f: string }>(
    tables
      .map(
        ({ name }) =>
          `select '${name}' as t, count(*) || ':' || coalesce(md5(string_agg(md5(to_jsonb(x)::text), '' order by md5(to_jsonb(x)::text))), '') as f from ${name} x`,
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
