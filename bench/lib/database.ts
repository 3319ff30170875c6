// PostgreSQL for the scenarios: a fresh database per measurement, dropped afterwards, on the
// server of BENCH_DATABASE_URL (default the test server).
import { randomBytes } from "node:crypto";
import postgres from "postgres";

export type Sql = postgres.Sql;

export const adminUrl = (): string =>
  process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Databases this process made and has not dropped yet (their backends' CPU is ours). */
export const ourDatabases = new Set<string>();

/** The URL of database `name` on the admin URL's server. */
export function databaseUrlOf(name: string): string {
  const u = new URL(adminUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

export interface Database {
  name: string;
  url: string;
}

export async function createDatabase(label: string): Promise<Database> {
  const name = `latchkey_bench_${label.replace(/\W/g, "_")}_${randomBytes(6).toString("hex")}`;
  await withSql(adminUrl(), (sql) => sql.unsafe(`create database ${name}`));
  ourDatabases.add(name);
  return { name, url: databaseUrlOf(name) };
}

export async function dropDatabase(name: string): Promise<void> {
  await withSql(adminUrl(), (sql) => sql.unsafe(`drop database if exists ${name} with (force)`));
  ourDatabases.delete(name);
}

/** Runs `fn` on a fresh database `latchkey_bench_<label>_<random>`, dropped even on failure. */
export async function withDatabase<T>(label: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await createDatabase(label);
  try {
    return await fn(db);
  } finally {
    await dropDatabase(db.name);
  }
}

/** Runs `fn` with one connection to `url`, closed afterwards. */
export async function withSql<T>(url: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
