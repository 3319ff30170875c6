import { Redis } from "ioredis";
import { windowAt } from "../domain/windows.js";
import { decideAll, type LimitCheck, type LimitDecision, type Limiter } from "./limiter.js";

/**
 * One round trip per decision: reads every counter of the current window, and takes every
 * cost only if every counter has room (all-or-nothing, atomic: a Lua script runs alone).
 * KEYS: one counter per limit, its window start in the name. ARGV: limit, cost and time to
 * live (ms) per key. Returns the counts before the decision, then 1 or 0. A counter named
 * twice (one decision limiting the same identifier twice) sees the cost of its earlier
 * entries, as if they were decided one after the other: the limit holds for their sum.
 */
const CHECK = `
local n = #KEYS
local out = {}
local ok = 1
local earlier = {}
for i = 1, n do
  local cost = tonumber(ARGV[3 * i - 1])
  local before = earlier[KEYS[i]] or 0
  local c = tonumber(redis.call('GET', KEYS[i]) or '0') + before
  earlier[KEYS[i]] = before + cost
  out[i] = c
  local limit = tonumber(ARGV[3 * i - 2])
  if limit <= 0 or c + cost > limit then ok = 0 end
end
if ok == 1 then
  for i = 1, n do
    local cost = tonumber(ARGV[3 * i - 1])
    if cost > 0 then
      redis.call('INCRBY', KEYS[i], cost)
      redis.call('PEXPIRE', KEYS[i], ARGV[3 * i])
    end
  end
end
out[n + 1] = ok
return out
`;

/** Gives back tokens (never below zero). ARGV: the cost per key. */
const REFUND = `
for i = 1, #KEYS do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  local cost = tonumber(ARGV[i])
  if c > 0 then
    if c <= cost then redis.call('DEL', KEYS[i]) else redis.call('DECRBY', KEYS[i], cost) end
  end
end
return 1
`;

/** Counters outlive their window a little, so a node whose clock lags still finds them. */
const EXPIRY_SLACK_MS = 5_000;

type LimiterRedis = Redis & {
  latchkeyCheck(numberOfKeys: number, ...args: (string | number)[]): Promise<number[]>;
  latchkeyRefund(numberOfKeys: number, ...args: (string | number)[]): Promise<number>;
};

/**
 * The limiter shared by every Latchkey process through Redis (or Redis Cluster: the keys of
 * one decision share the workspace hash tag, so they live on one slot). Exact across
 * processes. Commands fail fast while Redis is unreachable (no offline queue); the client
 * keeps reconnecting, so counting resumes by itself.
 */
export class RedisLimiter implements Limiter {
  private readonly redis: LimiterRedis;
  /** The client's last connection error, to say why Redis is not reachable. */
  private lastError: string | undefined;

  constructor(url: string) {
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // A check or refund sent before a connection broke may have run: sending it again
      // after reconnecting would take (or give back) its tokens twice. It fails instead,
      // and RATELIMIT_FAILURE_MODE answers.
      autoResendUnfulfilledCommands: false,
      connectTimeout: 2_000,
      // A backstop that frees a command Redis never answers; decisions give up sooner
      // (DECISION_TIMEOUT_MS, below).
      commandTimeout: 10_000,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    }) as LimiterRedis;
    // An unreachable Redis is reported per command; this keeps the error off stderr, and
    // keeps its words for the start-up wait's log.
    this.redis.on("error", (err: Error) => {
      this.lastError = err.message;
    });
    this.redis.defineCommand("latchkeyCheck", { lua: CHECK });
    this.redis.defineCommand("latchkeyRefund", { lua: REFUND });
  }

  /**
   * Resolves true once connected, or false after `timeoutMs` (Latchkey then starts anyway:
   * RATELIMIT_FAILURE_MODE decides while Redis is away, and the client keeps trying).
   */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.redis.status === "ready") return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.redis.off("ready", onReady);
        resolve(false);
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.redis.once("ready", onReady);
    });
  }

  /**
   * Resolves when Redis answers a PING; rejects at once while the client is not connected
   * (no offline queue), else when Redis answers an error or the command times out.
   */
  async ping(): Promise<void> {
    await this.redis.ping();
  }

  /** Why Redis is not reachable, as the client last heard it. */
  lastConnectionError(): string {
    return this.lastError ?? `not connected (${this.redis.status})`;
  }

  async check(checks: readonly LimitCheck[], now: number): Promise<LimitDecision> {
    const windows = checks.map((c) => windowAt(now, c.durationMs));
    const keys = checks.map((c, i) => redisKey(c, (windows[i] as { start: number }).start));
    const args: (string | number)[] = [];
    checks.forEach((c, i) => {
      args.push(c.limit, c.cost, (windows[i] as { reset: number }).reset - now + EXPIRY_SLACK_MS);
    });
    const counts = await withDeadline(
      this.redis.latchkeyCheck(keys.length, ...keys, ...args),
      DECISION_TIMEOUT_MS,
    );
    return decideAll(
      checks.map((check, i) => ({
        check,
        reset: (windows[i] as { reset: number }).reset,
        current: counts[i] as number,
      })),
    );
  }

  async refund(checks: readonly LimitCheck[], now: number): Promise<void> {
    const keys = checks.map((c) => redisKey(c, windowAt(now, c.durationMs).start));
    await withDeadline(
      this.redis.latchkeyRefund(keys.length, ...keys, ...checks.map((c) => c.cost)),
      DECISION_TIMEOUT_MS,
    );
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

/** How long a decision waits for Redis before RATELIMIT_FAILURE_MODE decides. */
const DECISION_TIMEOUT_MS = 1_000;

/** Thrown when Redis did not answer a decision in time. */
export class RedisTimeoutError extends Error {
  override name = "RedisTimeoutError";
}

/**
 * Rejects when `p` has not settled `ms` after the call. On a busy event loop the timer can
 * fire in the same turn as Redis's answer arrives (timers run before I/O); giving up only
 * after a setImmediate lets that answer through first. Counting an answered command as a
 * failure would let fail-open admit calls the count had already refused.
 */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new RedisTimeoutError(`Redis did not answer within ${ms} ms`));
      });
    }, ms);
    p.then(
      (v) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** `lk:{ws_...}:<scope>:<owner>:<name>:<durationMs>:<windowStart>`; the hash tag comes first. */
function redisKey(c: LimitCheck, windowStart: number): string {
  return `lk:${c.counter}:${c.durationMs}:${windowStart}`;
}
