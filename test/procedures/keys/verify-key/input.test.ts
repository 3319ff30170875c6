import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

// keys.verifyKey's request bounds (proto/latchkey/v2/keys.proto):
// every violation is a 400 naming the field, on every door, and spends nothing.

const s = useServer();
const HOUR = 3_600_000;

describe.each(DOORS)("keys.verifyKey input via %s", (door) => {
  const verify = (body: Record<string, unknown>) => s.call(door, "keys.verifyKey", body, null);

  /** A key with a balance and an auto-applied limit, to show a rejected request spent nothing. */
  const metered = () =>
    s.seed.key({
      credits: { remaining: 10 },
      ratelimits: [{ name: "window", limit: 5, duration: HOUR, autoApply: true }],
    });

  it.each([
    ["a negative credits cost", { credits: { cost: -1 } }, "/credits/cost"],
    ["a credits cost above 10^12", { credits: { cost: 1_000_000_000_001 } }, "/credits/cost"],
    [
      "a negative rate-limit cost",
      { ratelimits: [{ name: "window", cost: -1 }] },
      "/ratelimits/0/cost",
    ],
    [
      "an ad-hoc limit of 0",
      { ratelimits: [{ name: "adhoc", limit: 0, duration: 60_000 }] },
      "/ratelimits/0/limit",
    ],
    [
      "an ad-hoc duration of 999 ms",
      { ratelimits: [{ name: "adhoc", limit: 10, duration: 999 }] },
      "/ratelimits/0/duration",
    ],
    ["21 tags", { tags: Array.from({ length: 21 }, (_, i) => `tag${i}`) }, "/tags"],
    ["a 513-character tag", { tags: ["ok", "t".repeat(513)] }, "/tags/1"],
    ["an empty tag", { tags: [""] }, "/tags/0"],
    ["a 1001-character permissions query", { permissions: "p".repeat(1001) }, "/permissions"],
  ] as [string, Record<string, unknown>, string][])(
    "rejects %s with 400 at its field, spending nothing",
    async (_, extra, location) => {
      const k = await metered();
      const res = await verify({ key: k.key, ...extra });
      expect(res.status, JSON.stringify(res.error ?? res.data)).toBe(400);
      expect(res.error?.code).toBe("err:svc:application:invalid_input");
      expect(res.error?.errors?.[0]?.location).toBe(location);
      const next = await verify({ key: k.key });
      expect(next.data).toMatchObject({ code: "VALID", credits: 9 });
      expect(next.data.ratelimits).toEqual([
        expect.objectContaining({ name: "window", remaining: 4 }),
      ]);
    },
  );

  it("rejects a missing key with 400 at /key", async () => {
    const res = await verify({ tags: ["no key"] });
    expect(res.status, JSON.stringify(res.error ?? res.data)).toBe(400);
    expect(res.error?.code).toBe("err:svc:application:invalid_input");
    expect(res.error?.errors?.[0]?.location).toBe("/key");
  });

  it("rejects a 513-character key with 400 at /key, and takes one of 512", async () => {
    const res = await verify({ key: "k".repeat(513) });
    expect(res.status, JSON.stringify(res.error ?? res.data)).toBe(400);
    expect(res.error?.code).toBe("err:svc:application:invalid_input");
    expect(res.error?.errors?.[0]?.location).toBe("/key");
    const longest = await verify({ key: "k".repeat(512) });
    expect(longest.data).toEqual({ valid: false, code: "NOT_FOUND" });
  });

  it("accepts the bounds themselves: cost 10^12, 20 tags of 512, a 1000-character query", async () => {
    const k = await metered();
    const res = await verify({
      key: k.key,
      credits: { cost: 1_000_000_000_000 },
      tags: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(512, "x")),
      permissions: "p".repeat(1000),
      ratelimits: [{ name: "adhoc", limit: 1, duration: 1000, cost: 0 }],
    });
    expect(res.status, JSON.stringify(res.error)).toBe(200);
    expect(res.data.code).toBe("INSUFFICIENT_PERMISSIONS");
  });

  it("accepts migrationId and ignores it (VALID, the same answer as without it)", async () => {
    const k = await metered();
    const res = await verify({ key: k.key, migrationId: "some_migration" });
    expect(res.status, JSON.stringify(res.error)).toBe(200);
    expect(res.data).toMatchObject({ valid: true, code: "VALID", keyId: k.keyId, credits: 9 });
    const unknown = await verify({ key: "sk_unknown_with_migration", migrationId: "m_1" });
    expect(unknown.data).toEqual({ valid: false, code: "NOT_FOUND" });
  });
});
