import type { LimitCheck, LimitDecision, Limiter } from "../../ratelimit/limiter.js";

/**
 * A limiter that remembers the tokens its successful checks took and were not given back,
 * so that a verification whose transaction fails after its rate limits can return them.
 */
export class TokensTaken implements Limiter {
  private taken: { checks: readonly LimitCheck[]; now: number }[] = [];

  constructor(private readonly inner: Limiter) {}

  async check(checks: readonly LimitCheck[], now: number): Promise<LimitDecision> {
    const decision = await this.inner.check(checks, now);
    // A failed decision takes nothing; a made-up one (backend unreachable) took nothing.
    if (decision.success && !decision.degraded) this.taken.push({ checks, now });
    return decision;
  }

  refund(checks: readonly LimitCheck[], now: number): Promise<void> {
    this.taken = this.taken.filter((t) => t.checks !== checks);
    return this.inner.refund(checks, now);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Gives back whatever is still taken (once). */
  async giveBackAll(): Promise<void> {
    const taken = this.taken;
    this.taken = [];
    for (const t of taken) await this.inner.refund(t.checks, t.now);
  }
}
