import type { Logger } from "../log.js";

/**
 * A start that cannot go on: a database or service that stayed unreachable, refused us, or a
 * file that cannot be written. The message is one readable line; the CLI prints it as is.
 */
export class StartupError extends Error {
  override name = "StartupError";
}

/** First pause between attempts; each next one doubles, up to MAX_PAUSE_MS. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 2_000;

/** What `attempt` found: up, or down for now (retry), or refused for good (stop). */
export type Probe = { up: true } | { up: false; reason: string; retry: boolean };

/**
 * Runs `attempt` until it finds `what` up, pausing with exponential backoff and logging each
 * failed attempt, for at most `waitMs` (a service coming up with us, as in a compose file,
 * is waited for). Returns the reason of the last failure, or undefined once it is up; a
 * failure that cannot pass by itself (a refused password) ends the wait at once.
 */
export async function waitUntilUp(
  what: string,
  attempt: (remainingMs: number) => Promise<Probe>,
  opts: { waitMs: number; log: Logger },
): Promise<{ reason: string; attempts: number; retry: boolean } | undefined> {
  const deadline = performance.now() + opts.waitMs;
  let pause = FIRST_PAUSE_MS;
  for (let attempts = 1; ; attempts++) {
    const probe = await attempt(Math.max(deadline - performance.now(), 0));
    if (probe.up) {
      if (attempts > 1) opts.log.info({ attempts }, `${what} is reachable`);
      return undefined;
    }
    const remaining = deadline - performance.now();
    if (!probe.retry || remaining <= 0)
      return { reason: probe.reason, attempts, retry: probe.retry };
    const wait = Math.min(pause, remaining);
    opts.log.warn(
      { attempt: attempts, retryInMs: Math.round(wait), reason: probe.reason },
      `${what} is not reachable yet; retrying`,
    );
    await new Promise((resolve) => setTimeout(resolve, wait));
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
  }
}

/** Settles like `p`, or with `fallback` after `ms` (the attempt goes on, unobserved). */
export function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}
