import type { Queryable } from "../../src/storage/db.js";

/**
 * Every row of every table, to prove that a rejected request wrote nothing. Analytics event
 * tables are left out: events are written asynchronously, by a timer, whatever the request.
 */
export type Snapshot = Record<string, unknown[]>;

/** Reads all rows of all tables of the public schema (migrations bookkeeping excluded). */
export async function snapshot(db: Queryable): Promise<Snapshot> {
  const tables = await db.query<{ name: string }>(
    `select table_name as name
     from information_schema.tables
     where table_schema = 'public'
       and table_type = 'BASE TABLE'
       and table_name <> 'schema_migrations'
       and table_name not like 'key_verifications%'
       and table_name not like 'ratelimit_events%'
     order by table_name`,
  );
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
