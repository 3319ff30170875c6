// When the primary of WORKERS restarts a worker that died, and when it gives up.

/** The first restart of a worker waits this long; each further one in a row twice as long. */
export const FIRST_RESTART_DELAY_MS = 250;
/** The longest wait before a restart: a crash loop costs a start every 15 s, not a core. */
export const MAX_RESTART_DELAY_MS = 15_000;
/** A worker that served this long before dying starts its count of crashes afresh. */
export const STABLE_AFTER_MS = 60_000;
/**
 * Start-ups that may fail in a row (across workers, none listening in between) before the
 * primary gives up: by then the cause is not passing (a port taken, the database refusing).
 */
export const MAX_START_FAILURES = 5;

/** The wait before restarting a worker that has died `crashes` times in a row before (0: first). */
export function restartDelayMs(crashes: number): number {
  return Math.min(FIRST_RESTART_DELAY_MS * 2 ** Math.min(crashes, 16), MAX_RESTART_DELAY_MS);
}
