/** The database engine a test file runs against. */
export type Engine = "pglite" | "postgres";

/** The engine of this vitest project (see vitest.config.ts). */
export function currentEngine(): Engine {
  return process.env.TEST_ENGINE === "postgres" ? "postgres" : "pglite";
}

/** The PostgreSQL server of the tests, when configured. */
export const postgresUrl: string | undefined = process.env.TEST_DATABASE_URL || undefined;

/** The Redis server of the tests, when configured. */
export const redisUrl: string | undefined = process.env.TEST_REDIS_URL || undefined;

/** The URL of another database on the same PostgreSQL server. */
export function databaseUrl(base: string, database: string): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
}
