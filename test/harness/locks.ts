import type { TestServer } from "./server.js";

/**
 * The backends of this server's database that wait for a lock while running a statement
 * `like` (a SQL LIKE pattern): a test that holds a lock polls this to know a call is waiting.
 */
export async function waitingOnLocks(s: TestServer, like: string): Promise<number> {
  const rows = await s.db.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and query like $1`,
    [like],
  );
  return rows[0]?.n ?? 0;
}
