import { describeDatabaseUrl } from "../config/urls.js";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { type Db, isUnavailable } from "../storage/db.js";
import { openDatabase } from "../storage/open.js";
import { type Probe, StartupError, waitUntilUp, within } from "./wait.js";

/** An attempt may take this long at least, even when the wait is shorter (STARTUP_WAIT_S=0). */
const MIN_ATTEMPT_MS = 1_000;

/** The driver's own words for a failure, without our "database unavailable:" prefix. */
function reasonOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

async function probe(db: Db): Promise<Probe> {
  try {
    await db.query("select 1");
    return { up: true };
  } catch (err) {
    // Refused, reset, starting up (57P03): PostgreSQL may be on its way. A wrong password
    // or a missing database is not, and waiting for it would only hide the mistake.
    return { up: false, reason: reasonOf(err), retry: isUnavailable(err) };
  }
}

/**
 * Opens the configured database, and for PostgreSQL waits until it answers, retrying with
 * backoff for STARTUP_WAIT_S. Throws a StartupError with one readable line, never the URL.
 */
export async function openDatabaseWhenUp(config: Config, log: Logger): Promise<Db> {
  const db = await openDatabase(config);
  if (db.engine !== "postgres" || config.databaseUrl === undefined) return db;
  const what = `PostgreSQL at ${describeDatabaseUrl(config.databaseUrl)}`;
  const failed = await waitUntilUp(
    what,
    (remainingMs) =>
      within(probe(db), Math.max(remainingMs, MIN_ATTEMPT_MS), {
        up: false,
        reason: "no answer",
        retry: true,
      }),
    { waitMs: config.startupWaitS * 1000, log },
  );
  if (!failed) return db;
  await db.close().catch(() => {});
  throw new StartupError(
    failed.retry
      ? `${what} is not reachable after ${config.startupWaitS} s (${failed.attempts} attempts; STARTUP_WAIT_S sets the wait): ${failed.reason}`
      : `${what} refused the connection: ${failed.reason}`,
  );
}
