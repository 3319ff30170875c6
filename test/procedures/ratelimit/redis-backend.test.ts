import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisUrl } from "../../harness/engine.js";
import { startServer, type TestServer } from "../../harness/server.js";
import { startTcpProxy, type TcpProxy } from "../../harness/tcp-proxy.js";

const HOUR = 3_600_000;
let n = 0;

describe.skipIf(!redisUrl)("rate limits on Redis", () => {
  let s: TestServer;
  let redis: Redis;
  beforeAll(async () => {
    s = await startServer({ config: { redisUrl } });
    redis = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    redis.disconnect();
    await s.stop();
  });

  it("counts ratelimit.limit in Redis, under the workspace's hash tag", async () => {
    const ns = `redis.${++n}`;
    const body = { namespace: ns, identifier: "u", limit: 2, duration: HOUR };
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push((await s.call("json", "ratelimit.limit", body)).data.success);
    expect(answers).toEqual([true, true, false]);
    const keys = await redis.keys(`lk:{${s.workspaceId}}:ns:*`);
    expect(keys.length).toBeGreaterThan(0);
  });

  it("is all-or-nothing in multiLimit and in verifyKey", async () => {
    const ns = `redis.multi.${++n}`;
    const tight = { namespace: ns, identifier: "u", limit: 1, duration: HOUR };
    const loose = { namespace: `${ns}.loose`, identifier: "u", limit: 100, duration: HOUR };
    expect(
      (await s.call("json", "ratelimit.multiLimit", { limits: [loose, tight] })).data.passed,
    ).toBe(true);
    const refused = await s.call("json", "ratelimit.multiLimit", { limits: [loose, tight] });
    expect(refused.data.passed).toBe(false);
    expect((await s.call("json", "ratelimit.limit", loose)).data.remaining).toBe(98);

    const k = await s.seed.key({
      ratelimits: [
        { name: "tight", limit: 1, duration: HOUR },
        { name: "loose", limit: 100, duration: HOUR },
      ],
    });
    expect((await s.call("json", "keys.verifyKey", { key: k.key }, null)).data.code).toBe("VALID");
    const limited = await s.call("json", "keys.verifyKey", { key: k.key }, null);
    expect(limited.data.code).toBe("RATE_LIMITED");
    expect(limited.data.ratelimits.find((r: { name: string }) => r.name === "loose")).toMatchObject(
      { remaining: 99, exceeded: false },
    );
  });
});

describe.skipIf(!redisUrl)("RATELIMIT_FAILURE_MODE in the server", () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    const u = new URL(redisUrl as string);
    proxy = await startTcpProxy(u.hostname, Number(u.port || 6379));
  });
  afterAll(() => proxy.close());

  it.each(["open", "closed"] as const)(
    "%s: Redis down is %s, counted in /metrics, and counting resumes",
    async (mode) => {
      const s = await startServer({
        config: { redisUrl: `redis://127.0.0.1:${proxy.port}`, ratelimitFailureMode: mode },
      });
      try {
        const ns = `fail.${mode}.${++n}`;
        const body = { namespace: ns, identifier: "u", limit: 1, duration: HOUR };
        const k = await s.seed.key({
          ratelimits: [{ name: "per_hour", limit: 1, duration: HOUR }],
        });
        expect((await s.call("json", "ratelimit.limit", body)).data.success).toBe(true);
        expect((await s.call("json", "keys.verifyKey", { key: k.key }, null)).data.code).toBe(
          "VALID",
        );
        proxy.cut();
        const limit = await s.call("json", "ratelimit.limit", body);
        const verify = await s.call("json", "keys.verifyKey", { key: k.key }, null);
        if (mode === "open") {
          expect(limit.data.success).toBe(true);
          expect(verify.data.code).toBe("VALID");
        } else {
          expect(limit.status).toBe(503);
          expect(verify.status).toBe(503);
          expect(verify.error?.code).toBe("err:svc:application:service_unavailable");
        }
        const metrics = (await s.raw("/metrics")).body as string;
        expect(
          Number(/latchkey_ratelimit_backend_failures_total (\d+)/.exec(metrics)?.[1]),
        ).toBeGreaterThanOrEqual(2);
        proxy.restore();
        const deadline = Date.now() + 10_000;
        let success = true;
        while (success && Date.now() < deadline) {
          await new Promise((r) => setImmediate(r));
          const res = await s.call("json", "ratelimit.limit", body);
          success = res.status !== 200 || res.data.success;
        }
        expect(success).toBe(false);
      } finally {
        proxy.restore();
        await s.stop();
      }
    },
  );
});
