import type { Db } from "../db.js";
import { EVENT_TABLES, type EventTable } from "./events.js";

const PARTITION_NAME = /^[a-z_]+_(\d{4})(\d{2})(\d{2})$/;

/** The daily partitions of a table with the UTC day (Unix ms) each starts at. */
export async function eventPartitionsList(
  db: Db,
  table: EventTable,
): Promise<{ name: string; dayStartMs: number }[]> {
  const rows = await db.query<{ name: string }>(
    `select c.relname as name
     from pg_inherits i
     join pg_class c on c.oid = i.inhrelid
     join pg_class p on p.oid = i.inhparent
     where p.relname = $1`,
    [table],
  );
  return rows.flatMap(({ name }) => {
    const m = PARTITION_NAME.exec(name);
    return m ? [{ name, dayStartMs: Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) }] : [];
  });
}

/** Drops one daily partition; the name must be one `eventPartitionsList` returned. */
export async function eventPartitionDrop(db: Db, name: string): Promise<void> {
  if (!PARTITION_NAME.test(name) || !EVENT_TABLES.some((t) => name.startsWith(`${t}_`)))
    throw new TypeError(`not an event partition: ${name}`);
  await db.exec(`drop table if exists ${name}`);
}

/** Deletes the rows of an unpartitioned rollup whose bucket starts before `beforeMs`. */
export async function rollupDeleteBefore(
  db: Db,
  table: "verifications_per_hour" | "verifications_per_day" | "verifications_per_month",
  beforeMs: number,
): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `with gone as (
       delete from ${table} where time < to_timestamp($1 / 1000.0) returning 1
     )
     select count(*)::int as n from gone`,
    [beforeMs],
  );
  return rows[0]?.n ?? 0;
}
