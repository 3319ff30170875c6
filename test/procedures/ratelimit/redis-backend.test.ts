import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../gen/latchkey/v2/keys_pb.js";
import { redisUrl } from "../../harness/engine.js";
import { readyWhen } from "../../harness/health.js";
import { startServer, type TestServer } from "../../harness/server.js";
import { startTcpProxy, type TcpProxy } from "../../harness/tcp-proxy.js";
import { refusal } from "../../harness/typed.js";

// The rate limits on the Redis backend (REDIS_URL): ratelimit.limit, ratelimit.multiLimit and
// keys.verifyKey count in Redis with the same all-or-nothing answers as in process, and
// RATELIMIT_FAILURE_MODE decides what a call gets while Redis is unreachable.

const HOUR = 3_600_000n;
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
    const body = { namespace: `redis.${++n}`, identifier: "u", limit: 2n, duration: HOUR };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await s.api.ratelimit.limit(body)).data?.success);
    expect(answers).toEqual([true, true, false]);
    const keys = await redis.keys(`lk:{${s.workspaceId}}:ns:*`);
    expect(keys.length).toBeGreaterThan(0);
  });

  it("is all-or-nothing in ratelimit.multiLimit and in keys.verifyKey", async () => {
    const ns = `redis.multi.${++n}`;
    const tight = { namespace: ns, identifier: "u", limit: 1n, duration: HOUR };
    const loose = { namespace: `${ns}.loose`, identifier: "u", limit: 100n, duration: HOUR };
    const passed = await s.api.ratelimit.multiLimit({ limits: [loose, tight] });
    expect(passed.data?.passed).toBe(true);
    const refused = await s.api.ratelimit.multiLimit({ limits: [loose, tight] });
    expect(refused.data?.passed).toBe(false);
    expect((await s.api.ratelimit.limit(loose)).data?.remaining).toBe(98n);

    const k = await s.seed.key({
      ratelimits: [
        { name: "tight", limit: 1, duration: 3_600_000 },
        { name: "loose", limit: 100, duration: 3_600_000 },
      ],
    });
    const verify = () => s.as(null).keys.verifyKey({ key: k.key });
    expect((await verify()).data?.code).toBe(VerifyKeyCode.VALID);
    const limited = await verify();
    expect(limited.data?.code).toBe(VerifyKeyCode.RATE_LIMITED);
    expect(limited.data?.ratelimits.find((r) => r.name === "loose")).toMatchObject({
      remaining: 99n,
      exceeded: false,
    });
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
    "%s: Redis down is %s, counted in /metrics, makes the node unready, and counting resumes",
    async (mode) => {
      const s = await startServer({
        config: { redisUrl: `redis://127.0.0.1:${proxy.port}`, ratelimitFailureMode: mode },
      });
      try {
        const body = {
          namespace: `fail.${mode}.${++n}`,
          identifier: "u",
          limit: 1n,
          duration: HOUR,
        };
        const k = await s.seed.key({
          ratelimits: [{ name: "per_hour", limit: 1, duration: 3_600_000 }],
        });
        const verify = () => s.as(null).keys.verifyKey({ key: k.key });
        expect((await s.api.ratelimit.limit(body)).data?.success).toBe(true);
        expect((await verify()).data?.code).toBe(VerifyKeyCode.VALID);
        expect((await readyWhen(s.adminUrl, 200)).body).toEqual({ status: "ready" });
        proxy.cut();
        expect((await readyWhen(s.adminUrl, 503)).body).toEqual({
          status: "not ready",
          failing: ["redis"],
        });
        if (mode === "open") {
          expect((await s.api.ratelimit.limit(body)).data?.success).toBe(true);
          expect((await verify()).data?.code).toBe(VerifyKeyCode.VALID);
        } else {
          expect((await refusal(s.api.ratelimit.limit(body))).status).toBe(503);
          const refused = await refusal(verify());
          expect(refused.status).toBe(503);
          expect(refused.errorCode).toBe("err:svc:application:service_unavailable");
        }
        const metrics = (await s.admin("/metrics")).text;
        expect(
          Number(/latchkey_ratelimit_backend_failures_total (\d+)/.exec(metrics)?.[1]),
        ).toBeGreaterThanOrEqual(2);
        proxy.restore();
        await readyWhen(s.adminUrl, 200);
        // Redis counts again once reconnected: the second call of the window is refused.
        const deadline = Date.now() + 10_000;
        let success = true;
        while (success && Date.now() < deadline) {
          await new Promise((r) => setImmediate(r));
          const res = await s.api.ratelimit.limit(body).catch(() => undefined);
          success = res?.data?.success ?? true;
        }
        expect(success).toBe(false);
      } finally {
        proxy.restore();
        await s.stop();
      }
    },
  );
});
