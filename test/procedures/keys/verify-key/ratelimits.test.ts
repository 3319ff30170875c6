import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { VerifyKeyCode, type VerifyKeyResponseData } from "../../../../gen/latchkey/v2/keys_pb.js";
import type { LimitCheck, LimitDecision, Limiter } from "../../../../src/ratelimit/limiter.js";
import { ResilientLimiter } from "../../../../src/ratelimit/resilient.js";
import { useServer } from "../../../harness/server.js";
import { codeName, HOUR, verifierOf } from "./calls.js";

// keys.verifyKey applies rate limits: the auto-applied ones of the key and its identity, the
// configured ones a request names (with the request's cost), and ad-hoc ones a request gives
// with a limit and a window, all or nothing. A configured limit keeps its own limit and window
// whatever the request says: the caller cannot widen it.

const s = useServer();
const verify = verifierOf(s);

/** The limit of this name in an answer. */
const named = (data: VerifyKeyResponseData, name: string) =>
  data.ratelimits.find((r) => r.name === name);

describe("keys.verifyKey rate limits", () => {
  it("applies named limits with their cost, ad-hoc limits per key, and all-or-nothing batches", async () => {
    const k = await s.seed.key({
      ratelimits: [
        { name: "minute", limit: 2, duration: 60_000 },
        { name: "month", limit: 200, duration: 2_592_000_000, autoApply: false },
      ],
    });
    const month = { name: "month", cost: 10n };
    const a = await verify({ key: k.key, ratelimits: [month] });
    expect(named(a, "month")?.remaining).toBe(190n);
    await verify({ key: k.key });
    const blocked = await verify({ key: k.key, ratelimits: [month] });
    expect(blocked.code).toBe(VerifyKeyCode.RATE_LIMITED);
    expect(named(blocked, "month")).toMatchObject({ exceeded: false, remaining: 190n });
    const adhoc = await verify({
      key: k.key,
      ratelimits: [{ name: "burst", limit: 1n, duration: 1000n }],
    });
    expect(adhoc.code).toBe(VerifyKeyCode.RATE_LIMITED);
    expect(named(adhoc, "burst")).toMatchObject({ id: "", autoApply: false, exceeded: false });
  });

  it("shares an identity's limits between its keys", async () => {
    const { externalId } = await s.seed.identity();
    await s.api.identities.updateIdentity({
      externalId,
      ratelimits: [{ name: "team", limit: 3n, duration: BigInt(HOUR) }],
    });
    const a = await s.seed.key({ externalId });
    const b = await s.seed.key({ externalId });
    const codes = [];
    for (const key of [a.key, b.key, a.key, b.key]) codes.push(codeName(await verify({ key })));
    expect(codes).toEqual(["VALID", "VALID", "VALID", "RATE_LIMITED"]);
  });
});

describe("keys.verifyKey with a configured limit named in the request", () => {
  it("a limit of 1 per hour refuses the second call even when the caller asks for 1000", async () => {
    const k = await s.seed.key({ ratelimits: [{ name: "hourly", limit: 1, duration: HOUR }] });
    const wider = { key: k.key, ratelimits: [{ name: "hourly", limit: 1000n, duration: 1000n }] };
    const first = await verify(wider);
    expect(first.code).toBe(VerifyKeyCode.VALID);
    expect(named(first, "hourly")).toMatchObject({
      limit: 1n,
      duration: BigInt(HOUR),
      remaining: 0n,
    });
    const second = await verify(wider);
    expect(second.code).toBe(VerifyKeyCode.RATE_LIMITED);
    expect(named(second, "hourly")).toMatchObject({ limit: 1n, duration: BigInt(HOUR) });
  });

  it("an identity's configured limit is not widened either, and the request's cost applies", async () => {
    const { externalId } = await s.seed.identity();
    await s.api.identities.updateIdentity({
      externalId,
      ratelimits: [{ name: "team", limit: 5n, duration: BigInt(HOUR), autoApply: false }],
    });
    const k = await s.seed.key({ externalId });
    const ask = { name: "team", limit: 1_000_000n, duration: 2_592_000_000n, cost: 3n };
    const first = await verify({ key: k.key, ratelimits: [ask] });
    expect(first.code).toBe(VerifyKeyCode.VALID);
    expect(named(first, "team")).toMatchObject({
      limit: 5n,
      duration: BigInt(HOUR),
      remaining: 2n,
    });
    const second = await verify({ key: k.key, ratelimits: [ask] });
    expect(second.code).toBe(VerifyKeyCode.RATE_LIMITED);
  });

  it("a name that is not configured is still an ad-hoc limit with the caller's limit and window", async () => {
    const k = await s.seed.key({ ratelimits: [{ name: "hourly", limit: 1, duration: HOUR }] });
    const data = await verify({
      key: k.key,
      ratelimits: [{ name: "adhoc", limit: 7n, duration: 60_000n }],
    });
    expect(data.code).toBe(VerifyKeyCode.VALID);
    expect(named(data, "adhoc")).toMatchObject({ limit: 7n, duration: 60_000n, remaining: 6n });
  });
});

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

// With RATELIMIT_FAILURE_MODE=open and the limiter's backend unreachable, a verification is
// admitted on a made-up decision that took no tokens: when the credits then fail, there is
// nothing to give back, and the answer must not report tokens "added back".
describe("keys.verifyKey with the limiter down, failure mode open", () => {
  it("refunds nothing when the credits fail, and reports the limit as it is", async () => {
    const saved = s.app.deps.limiter;
    const backend = new DownBackend();
    s.app.deps.limiter = new ResilientLimiter(backend, "open", () => {}, pino({ level: "silent" }));
    try {
      const k = await s.seed.key({
        credits: { remaining: 0 },
        ratelimits: [{ name: "calls", limit: 10, duration: 60_000, autoApply: true }],
      });
      const data = await verify({ key: k.key });
      expect(data).toMatchObject({ code: VerifyKeyCode.USAGE_EXCEEDED, credits: 0n });
      expect(data.ratelimits).toMatchObject([
        { name: "calls", limit: 10n, remaining: 10n, exceeded: false },
      ]);
      expect(backend.refunds).toEqual([]);
    } finally {
      s.app.deps.limiter = saved;
    }
  });
});
