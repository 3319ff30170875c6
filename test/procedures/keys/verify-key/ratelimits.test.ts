import { describe, expect, it } from "vitest";
import type { CallResult } from "../../harness/doors.js";
import { DOORS, type TestDoor, useServer } from "../../harness/server.js";

// A verification may name a rate limit and give a `limit` and `duration` for it. When the
// name is a limit the key or its identity has configured, the configured limit and window
// are used (the request's cost still applies): the caller cannot widen it.

const s = useServer();
const HOUR = 3_600_000;

/** Verifies without a root key. */
const verify = (door: TestDoor, body: Record<string, unknown>) =>
  s.call(door, "keys.verifyKey", body, null);

type Limit = { name: string; limit: number; duration: number; remaining: number };
const named = (res: CallResult, name: string) =>
  (res.data.ratelimits as Limit[]).find((r) => r.name === name);

describe.each(DOORS)("keys.verifyKey via %s: configured limits", (door) => {
  it("a configured limit of 1 per hour refuses the second call even when the caller asks for 1000", async () => {
    const k = await s.seed.key({ ratelimits: [{ name: "hourly", limit: 1, duration: HOUR }] });
    const wider = { key: k.key, ratelimits: [{ name: "hourly", limit: 1000, duration: 1000 }] };
    const first = await verify(door, wider);
    expect(first.data.code).toBe("VALID");
    expect(named(first, "hourly")).toMatchObject({ limit: 1, duration: HOUR, remaining: 0 });
    const second = await verify(door, wider);
    expect(second.data.code).toBe("RATE_LIMITED");
    expect(named(second, "hourly")).toMatchObject({ limit: 1, duration: HOUR });
  });

  it("an identity's configured limit is not widened either, and the request's cost applies", async () => {
    const { externalId } = await s.seed.identity();
    await s.call("json", "identities.updateIdentity", {
      externalId,
      ratelimits: [{ name: "team", limit: 5, duration: HOUR, autoApply: false }],
    });
    const k = await s.seed.key({ externalId });
    const ask = { name: "team", limit: 1_000_000, duration: 2_592_000_000, cost: 3 };
    const first = await verify(door, { key: k.key, ratelimits: [ask] });
    expect(first.data.code).toBe("VALID");
    expect(named(first, "team")).toMatchObject({ limit: 5, duration: HOUR, remaining: 2 });
    const second = await verify(door, { key: k.key, ratelimits: [ask] });
    expect(second.data.code).toBe("RATE_LIMITED");
  });

  it("a name that is not configured is still an ad-hoc limit with the caller's limit and window", async () => {
    const k = await s.seed.key({ ratelimits: [{ name: "hourly", limit: 1, duration: HOUR }] });
    const res = await verify(door, {
      key: k.key,
      ratelimits: [{ name: "adhoc", limit: 7, duration: 60_000 }],
    });
    expect(res.data.code).toBe("VALID");
    expect(named(res, "adhoc")).toMatchObject({ limit: 7, duration: 60_000, remaining: 6 });
  });
});
