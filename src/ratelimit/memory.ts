import { windowAt } from "../domain/windows.js";
import { decideAll, type LimitCheck, type LimitDecision, type Limiter } from "./limiter.js";

interface Counter {
  windowStart: number;
  reset: number;
  count: number;
}

/** A counter per name and window length: changing a duration starts a separate counter. */
const counterKey = (c: LimitCheck) => `${c.counter}|${c.durationMs}`;

/**
 * Expired counters are swept every minute, and at most once a second while the map holds
 * more than this many entries.
 */
const SWEEP_THRESHOLD = 100_000;

/**
 * The in-process limiter: exact for one process (JavaScript runs one decision at a time),
 * and its counters are lost with the process. Used when no REDIS_URL is configured.
 */
export class MemoryLimiter implements Limiter {
  private readonly counters = new Map<string, Counter>();
  private readonly timer: NodeJS.Timeout;
  private lastSweep = 0;

  constructor(private readonly clock: { now(): number } = { now: () => Date.now() }) {
    this.timer = setInterval(() => this.sweep(this.clock.now()), 60_000);
    this.timer.unref();
  }

  async check(checks: readonly LimitCheck[], now: number): Promise<LimitDecision> {
    // A counter named twice sees the cost of its earlier entries (as in the Redis script).
    const earlier = checks.length > 1 ? new Map<string, number>() : undefined;
    const states = checks.map((check) => {
      const w = windowAt(now, check.durationMs);
      const key = counterKey(check);
      const entry = this.counters.get(key);
      let current = entry && entry.windowStart === w.start ? entry.count : 0;
      if (earlier) {
        const before = earlier.get(key) ?? 0;
        current += before;
        earlier.set(key, before + check.cost);
      }
      return { check, reset: w.reset, current, windowStart: w.start, key, entry };
    });
    const decision = decideAll(states);
    if (decision.success) {
      for (const s of states) {
        if (s.check.cost === 0) continue;
        const count = s.current + s.check.cost;
        // In place when the counter exists: a new object per decision in this long-lived Map
        // would be old-generation garbage, the kind that brings full collections.
        if (s.entry) {
          s.entry.windowStart = s.windowStart;
          s.entry.reset = s.reset;
          s.entry.count = count;
        } else this.counters.set(s.key, { windowStart: s.windowStart, reset: s.reset, count });
      }
    }
    // Past the threshold, sweep at most once a second: live counters stay, so sweeping on
    // every decision would scan the whole map each time.
    if (this.counters.size > SWEEP_THRESHOLD && now - this.lastSweep >= 1_000) this.sweep(now);
    return decision;
  }

  async refund(checks: readonly LimitCheck[], now: number): Promise<void> {
    for (const c of checks) {
      const entry = this.counters.get(counterKey(c));
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
    this.lastSweep = now;
    for (const [key, entry] of this.counters) if (entry.reset <= now) this.counters.delete(key);
  }
}
