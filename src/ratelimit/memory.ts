import { windowAt } from "../domain/windows.js";
import type { LimitCheck, LimitDecision, Limiter, LimitOutcome } from "./limiter.js";

interface Counter {
  windowStart: number;
  reset: number;
  count: number;
}

/** Expired counters are swept when the map grows past this many entries, and every minute. */
const SWEEP_THRESHOLD = 100_000;

/**
 * The in-process limiter: exact for one process (JavaScript runs one decision at a time),
 * and its counters are lost with the process. Used when no REDIS_URL is configured.
 */
export class MemoryLimiter implements Limiter {
  private readonly counters = new Map<string, Counter>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly clock: { now(): number } = { now: () => Date.now() }) {
    this.timer = setInterval(() => this.sweep(this.clock.now()), 60_000);
    this.timer.unref();
  }

  async check(checks: readonly LimitCheck[], now: number): Promise<LimitDecision> {
    const states = checks.map((c) => {
      const w = windowAt(now, c.durationMs);
      const key = `${c.counter}|${c.durationMs}`;
      const entry = this.counters.get(key);
      const current = entry && entry.windowStart === w.start ? entry.count : 0;
      const fits = c.limit > 0 && current + c.cost <= c.limit;
      return { c, w, key, current, fits };
    });
    const success = states.every((s) => s.fits);
    const outcomes: LimitOutcome[] = states.map((s) => {
      if (success && s.c.cost > 0) {
        this.counters.set(s.key, {
          windowStart: s.w.start,
          reset: s.w.reset,
          count: s.current + s.c.cost,
        });
      }
      const remaining = !s.fits
        ? 0
        : success
          ? s.c.limit - s.current - s.c.cost
          : s.c.limit - s.current;
      return { passed: s.fits, remaining: Math.max(0, remaining), reset: s.w.reset };
    });
    if (this.counters.size > SWEEP_THRESHOLD) this.sweep(now);
    return { success, outcomes };
  }

  async refund(checks: readonly LimitCheck[], now: number): Promise<void> {
    for (const c of checks) {
      const key = `${c.counter}|${c.durationMs}`;
      const entry = this.counters.get(key);
      if (entry && entry.windowStart === windowAt(now, c.durationMs).start) {
        entry.count = Math.max(0, entry.count - c.cost);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
  }

  /** Number of live counters (tests and metrics). */
  get size(): number {
    return this.counters.size;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.counters) if (entry.reset <= now) this.counters.delete(key);
  }
}
