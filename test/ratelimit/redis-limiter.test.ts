import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomString } from "../../src/domain/random.js";
import { counterName } from "../../src/ratelimit/limiter.js";
import { RedisLimiter } from "../../src/ratelimit/redis.js";
import { ResilientLimiter } from "../../src/ratelimit/resilient.js";
import { redisUrl } from "../harness/engine.js";
import { startTcpProxy, type TcpProxy } from "../harness/tcp-proxy.js";

const ws = () => `ws_${randomString(12)}`;
const check = (counter: string, limit: number, cost = 1, durationMs = 3_600_000) => ({
  counter,
  limit,
  cost,
  durationMs,
});

describe.skipIf(!redisUrl)("the Redis limiter", () => {
  let limiter: RedisLimiter;
  beforeAll(async () => {
    limiter = new RedisLimiter(redisUrl as string);
    expect(await limiter.ready(5_000)).toBe(true);
  });
  afterAll(() => limiter.close());

  it("keeps an answer that arrived while the event loop was blocked past the deadline", async () => {
    const c = counterName(ws(), "ns", "rlns_busy", "user");
    const pending = limiter.check([check(c, 1)], Date.now());
    // Block this process longer than the 1 s decision deadline; Redis answers meanwhile.
    const until = Date.now() + 1_500;
    while (Date.now() < until) {}
    const decision = await pending;
    expect(decision.success).toBe(true);
    // The count took exactly that one token.
    expect((await limiter.check([check(c, 1)], Date.now())).success).toBe(false);
  });

  it("admits up to the limit per fixed window and resets with the window", async () => {
    const c = counterName(ws(), "ns", "rlns_1", "user");
    const now = Date.parse("2026-03-01T10:00:30Z");
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await limiter.check([check(c, 3, 1, 60_000)], now));
    expect(answers.map((a) => [a.success, a.outcomes[0]?.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(answers[0]?.outcomes[0]?.reset).toBe(Date.parse("2026-03-01T10:01:00Z"));
    expect(
      (await limiter.check([check(c, 3, 1, 60_000)], Date.parse("2026-03-01T10:01:00Z"))).success,
    ).toBe(true);
  });

  it("is all-or-nothing over several counters, and refunds", async () => {
    const w = ws();
    const a = counterName(w, "k", "key_1", "minute");
    const b = counterName(w, "k", "key_1", "month");
    const now = Date.now();
    await limiter.check([check(a, 1)], now);
    const d = await limiter.check([check(b, 200), check(a, 1)], now);
    expect(d.success).toBe(false);
    expect(d.outcomes.map((o) => [o.passed, o.remaining])).toEqual([
      [true, 200],
      [false, 0],
    ]);
    await limiter.refund([check(a, 1)], now);
    expect((await limiter.check([check(b, 200), check(a, 1)], now)).success).toBe(true);
  });

  it("holds a counter named twice in one decision to the sum of its costs", async () => {
    const w = ws();
    const same = counterName(w, "ns", "rlns_d", "same");
    const now = Date.now();
    const twice = await limiter.check([check(same, 1), check(same, 1)], now);
    expect(twice.success).toBe(false);
    expect(twice.outcomes.map((o) => o.passed)).toEqual([true, false]);
    expect((await limiter.check([check(same, 1)], now)).success).toBe(true);
    const pair = counterName(w, "ns", "rlns_d", "pair");
    const fits = await limiter.check([check(pair, 2), check(pair, 2)], now);
    expect(fits.success).toBe(true);
    expect(fits.outcomes.map((o) => o.remaining)).toEqual([1, 0]);
    expect((await limiter.check([check(pair, 2)], now)).success).toBe(false);
  });

  it("admits exactly the limit of 1000 concurrent decisions", async () => {
    const c = counterName(ws(), "ns", "rlns_x", "hot");
    const now = Date.now();
    const results = await Promise.all(
      Array.from({ length: 1000 }, () => limiter.check([check(c, 100)], now)),
    );
    expect(results.filter((r) => r.success)).toHaveLength(100);
  });

  it("denies a limit of 0", async () => {
    expect(
      (await limiter.check([check(counterName(ws(), "ns", "a", "b"), 0, 0)], Date.now())).success,
    ).toBe(false);
  });
});

describe.skipIf(!redisUrl)("RATELIMIT_FAILURE_MODE while Redis is unreachable", () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    const u = new URL(redisUrl as string);
    proxy = await startTcpProxy(u.hostname, Number(u.port || 6379));
  });
  afterAll(() => proxy.close());

  it.each(["open", "closed"] as const)(
    "%s: answers by the mode, counts failures, and recovers",
    async (mode) => {
      let failures = 0;
      const inner = new RedisLimiter(`redis://127.0.0.1:${proxy.port}`);
      expect(await inner.ready(5_000)).toBe(true);
      const limiter = new ResilientLimiter(
        inner,
        mode,
        () => failures++,
        pino({ level: "silent" }),
      );
      try {
        const c = counterName(ws(), "ns", "rlns_f", "u");
        expect((await limiter.check([check(c, 1)], Date.now())).success).toBe(true);
        proxy.cut();
        const during = limiter.check([check(c, 1)], Date.now());
        if (mode === "open") expect((await during).success).toBe(true);
        else await expect(during).rejects.toMatchObject({ entry: { status: 503 } });
        expect(failures).toBeGreaterThan(0);
        proxy.restore();
        const started = performance.now();
        const deadline = Date.now() + 10_000;
        let counted = false;
        while (!counted && Date.now() < deadline) {
          // Let the client's reconnect timers run between attempts (a failed command settles
          // without I/O, so a tight loop would starve them).
          await new Promise((r) => setImmediate(r));
          const before = failures;
          const d = await limiter.check([check(c, 1)], Date.now()).catch(() => undefined);
          // Redis answers again: the limit of 1 was used before the cut, so it refuses.
          counted = d !== undefined && failures === before && !d.success;
        }
        console.log(
          `${mode}: counting resumed ${(performance.now() - started).toFixed(0)} ms after Redis came back`,
        );
        expect(counted).toBe(true);
      } finally {
        proxy.restore();
        await limiter.close();
      }
    },
  );
});
