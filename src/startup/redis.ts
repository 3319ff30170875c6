import { describeRedisUrl } from "../config/urls.js";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { RedisLimiter } from "../ratelimit/redis.js";
import { waitUntilUp } from "./wait.js";

/** How long one attempt waits for the connection (the client reconnects by itself meanwhile). */
const ATTEMPT_MS = 1_000;

/** Answers that waiting cannot change: the configured password is wrong or missing. */
const REFUSED = /WRONGPASS|NOAUTH|invalid password/i;

/**
 * Connects the Redis limiter, waiting for Redis with backoff for STARTUP_WAIT_S while it
 * comes up. A Redis still away after that does not stop the start: RATELIMIT_FAILURE_MODE
 * decides while it is, as it does when Redis goes away later, and the client keeps trying.
 */
export async function connectRedisLimiter(
  url: string,
  config: Pick<Config, "startupWaitS" | "ratelimitFailureMode">,
  log: Logger,
): Promise<RedisLimiter> {
  const redis = new RedisLimiter(url);
  const what = `Redis at ${describeRedisUrl(url)}`;
  const failed = await waitUntilUp(
    what,
    async () => {
      if (await redis.ready(ATTEMPT_MS)) return { up: true };
      const reason = redis.lastConnectionError();
      return { up: false, reason, retry: !REFUSED.test(reason) };
    },
    { waitMs: config.startupWaitS * 1000, log },
  );
  if (failed) {
    log.warn(
      { mode: config.ratelimitFailureMode, reason: failed.reason },
      `${what} is not reachable; rate limits follow RATELIMIT_FAILURE_MODE until it is`,
    );
  }
  return redis;
}
