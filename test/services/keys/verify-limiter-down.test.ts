import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { LimitCheck, LimitDecision, Limiter } from "../../../src/ratelimit/limiter.js";
import { ResilientLimiter } from "../../../src/ratelimit/resilient.js";
import { DOORS, useServer } from "../../harness/server.js";

// With RATELIMIT_FAILURE_MODE=open and the limiter's backend unreachable, a verification is
// admitted on a made-up decision that took no tokens: when the credits then fail, there is
// nothing to give back, and the answer must not report tokens "added back".

const s = useServer();

/** A backend that is down for checks and records the refunds it is asked for. */
class DownBackend implements Limiter {
  refunds: LimitCheck[][] = [];
  async check(): Promise<LimitDecision> {
    throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), {
      code: "ECONNREFUSED",
    });
  }
  async refund(checks: readonly LimitCheck[]): Promise<void> {
    this.refunds.push([...checks]);
  }
  async close(): Promise<void> {}
}

describe.each(DOORS)("keys.verifyKey with the limiter down, failure mode open, via %s", (door) => {
  it("refunds nothing when the credits fail, and reports the limit as it is", async () => {
    const saved = s.app.deps.limiter;
    const backend = new DownBackend();
    s.app.deps.limiter = new ResilientLimiter(backend, "open", () => {}, pino({ level: "silent" }));
    try {
      const k = await s.seed.key({
        credits: { remaining: 0 },
        ratelimits: [{ name: "calls", limit: 10, duration: 60_000, autoApply: true }],
      });
      const res = await s.call(door, "keys.verifyKey", { key: k.key }, null);
      expect(res.data).toMatchObject({ code: "USAGE_EXCEEDED", credits: 0 });
      expect(res.data.ratelimits).toEqual([
        expect.objectContaining({ name: "calls", limit: 10, remaining: 10, exceeded: false }),
      ]);
      expect(backend.refunds).toEqual([]);
    } finally {
      s.app.deps.limiter = saved;
    }
  });
});
