/**
 * When a failed delivery is tried again: exponential backoff from a base delay, doubling per
 * attempt, capped at an hour, with jitter that only ever brings a retry earlier (by up to a
 * fifth), so that receivers that failed together do not all retry in one instant and no retry
 * comes later than its nominal delay. A delivery is given up once its next retry would fall
 * after its retry window (a day by default) from the event.
 */

/** The longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 3_600_000;
/** The share of a delay the jitter may take off. */
const JITTER = 0.2;

/** The retry rules a deployment configures. */
export interface RetryPolicy {
  /** The wait before the first retry (WEBHOOK_RETRY_BASE_MS). */
  baseMs: number;
  /** How long after the event retries go on (WEBHOOK_RETRY_WINDOW_MS). */
  windowMs: number;
}

/**
 * The wait after the `attempt`-th failed attempt (1 for the first): `baseMs · 2^(attempt-1)`,
 * at most an hour, less a jitter of up to a fifth drawn from `random` (in [0, 1)).
 */
export function retryDelayMs(attempt: number, baseMs: number, random: number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  const nominal = Math.min(baseMs * 2 ** exponent, MAX_RETRY_DELAY_MS);
  return Math.round(nominal * (1 - JITTER * random));
}

/**
 * The due time of the next attempt after the `attempt`-th failed one at `nowMs`, for an event
 * of `createdAtMs`; undefined when the delivery is to be given up.
 */
export function nextRetryAt(
  policy: RetryPolicy,
  attempt: number,
  createdAtMs: number,
  nowMs: number,
  random: number,
): number | undefined {
  const at = nowMs + retryDelayMs(attempt, policy.baseMs, random);
  return at - createdAtMs > policy.windowMs ? undefined : at;
}

/**
 * Whether an endpoint that has failed every attempt since `failingSinceMs` is to be disabled
 * at `nowMs`, after `disableAfterMs` of failures.
 */
export function shouldDisable(
  failingSinceMs: number | null,
  nowMs: number,
  disableAfterMs: number,
): boolean {
  return failingSinceMs !== null && nowMs - failingSinceMs >= disableAfterMs;
}
