import { windowAt } from "../domain/windows.js";
import { errors } from "../errors/service-error.js";
import type { Logger } from "../log.js";
import type { LimitCheck, LimitDecision, Limiter } from "./limiter.js";

/** What to answer while the limiter's backend (Redis) is unreachable. */
export type FailureMode = "open" | "closed";

/**
 * Applies RATELIMIT_FAILURE_MODE around a limiter whose backend can fail: `open` admits
 * (every limit reports full room), `closed` answers 503 service_unavailable; never a
 * made-up refusal. Each failure is counted and logged (at most once per second).
 */
export class ResilientLimiter implements Limiter {
  private lastLog = 0;

  constructor(
    private readonly inner: Limiter,
    private readonly mode: FailureMode,
    private readonly onFailure: () => void,
    private readonly log: Logger,
  ) {}

  async check(checks: readonly LimitCheck[], now: number): Promise<LimitDecision> {
    try {
      return await this.inner.check(checks, now);
    } catch (err) {
      this.failed(err);
      if (this.mode === "closed") throw errors.serviceUnavailable(err);
      return {
        success: true,
        degraded: true,
        outcomes: checks.map((c) => ({
          passed: true,
          remaining: c.limit,
          reset: windowAt(now, c.durationMs).reset,
        })),
      };
    }
  }

  async refund(checks: readonly LimitCheck[], now: number): Promise<void> {
    try {
      await this.inner.refund(checks, now);
    } catch (err) {
      // The tokens stay taken: the limit errs on the strict side.
      this.failed(err);
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private failed(err: unknown): void {
    this.onFailure();
    const now = Date.now();
    if (now - this.lastLog >= 1_000) {
      this.lastLog = now;
      this.log.warn({ err, mode: this.mode }, "rate limiter backend unavailable");
    }
  }
}
