import { describe, expect, it } from "vitest";
import { DOORS, type TestDoor, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;
const HOUR = 3_600_000;

/** Verifies without a root key unless one is given. */
const verify = (door: TestDoor, body: Record<string, unknown>, auth: string | null = null) =>
  s.call(door, "keys.verifyKey", body, auth);

describe.each(DOORS)("keys.verifyKey via %s", (door) => {
  describe("codes", () => {
    it("VALID with the key's fields, meta.environment verbatim, credits after the cost", async () => {
      const role = `vrole_${++n}`;
      await s.call("json", "permissions.createRole", {
        name: role,
        permissions: [`${role}.docs.read`],
      });
      const { id: identityId, externalId } = await s.seed.identity();
      await s.call("json", "identities.updateIdentity", {
        identity: identityId,
        meta: { tier: "gold" },
        ratelimits: [
          { name: "shared", limit: 100, duration: HOUR },
          { name: "shadowed", limit: 100, duration: HOUR },
        ],
      });
      const meta = { environment: "test", nested: { ok: true, n: 1.5, list: ["ä", null] } };
      const k = await s.seed.key({
        name: "verified",
        meta,
        externalId,
        roles: [role],
        permissions: ["billing.*"],
        expires: 4102444800000,
        credits: { remaining: 10 },
        ratelimits: [{ name: "shadowed", limit: 5, duration: HOUR }],
      });
      const res = await verify(door, { key: k.key });
      expect(res.status).toBe(200);
      expect(res.data).toEqual({
        valid: true,
        code: "VALID",
        keyId: k.keyId,
        name: "verified",
        meta,
        expires: 4102444800000,
        credits: 9,
        enabled: true,
        permissions: ["billing.*", `${role}.docs.read`],
        roles: [role],
        identity: {
          id: identityId,
          externalId,
          meta: { tier: "gold" },
          ratelimits: [
            {
              id: expect.stringMatching(/^rl_/),
              name: "shared",
              limit: 100,
              duration: HOUR,
              autoApply: true,
            },
          ],
        },
        ratelimits: expect.arrayContaining([
          expect.objectContaining({
            name: "shadowed",
            limit: 5,
            remaining: 4,
            exceeded: false,
            autoApply: true,
          }),
          expect.objectContaining({ name: "shared", limit: 100, remaining: 99, exceeded: false }),
        ]),
      });
      expect(res.data.ratelimits).toHaveLength(2);
    });

    it.each([
      ["an unknown key", async () => "sk_not_a_real_key"],
      [
        "a deleted key",
        async () => {
          const k = await s.seed.key();
          await s.call("json", "keys.deleteKey", { keyId: k.keyId });
          return k.key;
        },
      ],
      [
        "a key of a deleted API",
        async () => {
          const k = await s.seed.key();
          await s.call("json", "apis.deleteApi", { apiId: k.apiId });
          return k.key;
        },
      ],
    ])("NOT_FOUND for %s, with only valid and code", async (_, secret) => {
      const res = await verify(door, { key: await secret(), credits: { cost: 1 } });
      expect(res).toMatchObject({ status: 200, data: { valid: false, code: "NOT_FOUND" } });
      expect(Object.keys(res.data).sort()).toEqual(["code", "valid"]);
    });

    // A root key of another workspace: in verify-scope.test.ts, on an instance of two
    // workspaces (a second one here would make every header-less verification below 401).
    it("NOT_FOUND for a root key without verify_key on the key's API", async () => {
      const k = await s.seed.key();
      const elsewhere = await s.seed.rootKey(["api.api_elsewhere.verify_key"]);
      expect((await verify(door, { key: k.key }, elsewhere)).data.code).toBe("NOT_FOUND");
      const right = await s.seed.rootKey([`api.${k.apiId}.verify_key`]);
      expect((await verify(door, { key: k.key }, right)).data.code).toBe("VALID");
    });

    it("DISABLED, EXPIRED and INSUFFICIENT_PERMISSIONS", async () => {
      const disabled = await s.seed.key({ enabled: false });
      expect((await verify(door, { key: disabled.key })).data).toMatchObject({
        valid: false,
        code: "DISABLED",
        enabled: false,
      });
      const expired = await s.seed.key({ expires: s.clock.now() - 1 });
      expect((await verify(door, { key: expired.key })).data.code).toBe("EXPIRED");
      const limited = await s.seed.key({ permissions: ["docs.read"] });
      const res = await verify(door, { key: limited.key, permissions: "docs.read AND docs.write" });
      expect(res.data).toMatchObject({
        valid: false,
        code: "INSUFFICIENT_PERMISSIONS",
        permissions: ["docs.read"],
      });
    });

    it("RATE_LIMITED once an auto-applied limit is used up, until the window ends", async () => {
      s.clock.set(Date.parse("2026-07-01T10:00:00Z"));
      const k = await s.seed.key({
        ratelimits: [{ name: "per_minute", limit: 2, duration: 60_000 }],
      });
      const codes = [];
      for (let i = 0; i < 3; i++) codes.push((await verify(door, { key: k.key })).data.code);
      expect(codes).toEqual(["VALID", "VALID", "RATE_LIMITED"]);
      const limited = await verify(door, { key: k.key });
      expect(limited.data.ratelimits).toEqual([
        {
          id: expect.stringMatching(/^rl_/),
          name: "per_minute",
          limit: 2,
          duration: 60_000,
          remaining: 0,
          reset: Date.parse("2026-07-01T10:01:00Z"),
          exceeded: true,
          autoApply: true,
        },
      ]);
      s.clock.set(Date.parse("2026-07-01T10:01:00Z"));
      expect((await verify(door, { key: k.key })).data.code).toBe("VALID");
    });

    it("USAGE_EXCEEDED when the balance is below the cost, spending nothing", async () => {
      const k = await s.seed.key({ credits: { remaining: 5 } });
      const over = await verify(door, { key: k.key, credits: { cost: 15 } });
      expect(over.data).toMatchObject({ valid: false, code: "USAGE_EXCEEDED", credits: 5 });
      expect((await verify(door, { key: k.key, credits: { cost: 5 } })).data).toMatchObject({
        code: "VALID",
        credits: 0,
      });
      expect((await verify(door, { key: k.key })).data).toMatchObject({
        code: "USAGE_EXCEEDED",
        credits: 0,
      });
    });
  });

  describe("precedence: the first failing check wins and a refused verification spends nothing", () => {
    it("DISABLED beats EXPIRED beats INSUFFICIENT_PERMISSIONS", async () => {
      const all = await s.seed.key({ enabled: false, expires: 0, permissions: [] });
      expect((await verify(door, { key: all.key, permissions: "x.y" })).data.code).toBe("DISABLED");
      const two = await s.seed.key({ expires: 0 });
      expect((await verify(door, { key: two.key, permissions: "x.y" })).data.code).toBe("EXPIRED");
    });

    it("INSUFFICIENT_PERMISSIONS beats RATE_LIMITED and spends no tokens or credits", async () => {
      const k = await s.seed.key({
        credits: { remaining: 3 },
        ratelimits: [{ name: "rlx", limit: 1, duration: HOUR }],
      });
      for (let i = 0; i < 3; i++)
        expect((await verify(door, { key: k.key, permissions: "nope" })).data.code).toBe(
          "INSUFFICIENT_PERMISSIONS",
        );
      expect((await verify(door, { key: k.key })).data).toMatchObject({
        code: "VALID",
        credits: 2,
      });
    });

    it("RATE_LIMITED beats USAGE_EXCEEDED and spends no credits", async () => {
      const k = await s.seed.key({
        credits: { remaining: 1 },
        ratelimits: [{ name: "rlx", limit: 1, duration: HOUR }],
      });
      expect((await verify(door, { key: k.key })).data.code).toBe("VALID");
      expect((await verify(door, { key: k.key, credits: { cost: 5 } })).data.code).toBe(
        "RATE_LIMITED",
      );
      const res = await s.call("json", "keys.getKey", { keyId: k.keyId });
      expect(res.data.credits.remaining).toBe(0);
    });

    it("USAGE_EXCEEDED gives the rate-limit tokens back", async () => {
      const k = await s.seed.key({
        credits: { remaining: 0 },
        ratelimits: [{ name: "rlx", limit: 1, duration: HOUR }],
      });
      const res = await verify(door, { key: k.key });
      expect(res.data.code).toBe("USAGE_EXCEEDED");
      expect(res.data.ratelimits[0]).toMatchObject({ remaining: 1, exceeded: false });
      await s.call("json", "keys.updateCredits", { keyId: k.keyId, operation: "set", value: 1 });
      expect((await verify(door, { key: k.key })).data.code).toBe("VALID");
    });

    it("a permissions query syntax error is 400 whatever the key's state", async () => {
      for (const key of ["unknown_key_x", (await s.seed.key({ enabled: false })).key]) {
        const res = await verify(door, { key, permissions: "docs.read AND" });
        expect(res.status).toBe(400);
        expect(res.error?.code).toBe("err:svc:bad_request:permissions_query_syntax_error");
        expect(res.error?.errors?.[0]?.location).toBe("/permissions");
        expect(res.error?.errors?.[0]?.message).toContain("position 13");
      }
    });

    it("an unknown requested rate limit is 412 only once the key passes its status checks", async () => {
      const k = await s.seed.key();
      const res = await verify(door, { key: k.key, ratelimits: [{ name: "missing_limit" }] });
      expect(res.status).toBe(412);
      expect(res.error?.detail).toContain("missing_limit");
      const disabled = await s.seed.key({ enabled: false });
      expect(
        (await verify(door, { key: disabled.key, ratelimits: [{ name: "missing_limit" }] })).data
          .code,
      ).toBe("DISABLED");
    });
  });

  describe("credits", () => {
    it("spends 1 by default and the cost given; cost 0 passes without spending, even at 0", async () => {
      const k = await s.seed.key({ credits: { remaining: 3 } });
      expect((await verify(door, { key: k.key })).data.credits).toBe(2);
      expect((await verify(door, { key: k.key, credits: { cost: 2 } })).data.credits).toBe(0);
      const free = await verify(door, { key: k.key, credits: { cost: 0 } });
      expect(free.data).toMatchObject({ code: "VALID", credits: 0 });
    });

    it("credits without a cost: 400 on the /v2 door; cost 0 over protobuf, which cannot tell", async () => {
      const k = await s.seed.key({ credits: { remaining: 3 } });
      const res = await verify(door, { key: k.key, credits: {} });
      if (door === "json") {
        expect(res.status).toBe(400);
        expect(res.error?.errors?.[0]?.location).toBe("/credits/cost");
      } else expect(res.data).toMatchObject({ code: "VALID", credits: 3 });
      expect((await verify(door, { key: k.key })).data.credits).toBe(2);
    });

    it("refills lazily at the boundary before spending", async () => {
      s.clock.set(Date.parse("2026-09-01T12:00:00Z"));
      const k = await s.seed.key({
        credits: { remaining: 1, refill: { interval: "daily", amount: 5 } },
      });
      expect((await verify(door, { key: k.key })).data.credits).toBe(0);
      expect((await verify(door, { key: k.key })).data.code).toBe("USAGE_EXCEEDED");
      s.clock.set(Date.parse("2026-09-02T00:00:00Z"));
      expect((await verify(door, { key: k.key })).data).toMatchObject({
        code: "VALID",
        credits: 4,
      });
      expect((await s.call("json", "keys.getKey", { keyId: k.keyId })).data.credits.remaining).toBe(
        4,
      );
    });

    it("spends a rerolled key's shared balance from both keys", async () => {
      const k = await s.seed.key({ credits: { remaining: 2 } });
      const fresh = (await s.call("json", "keys.rerollKey", { keyId: k.keyId, expiration: HOUR }))
        .data;
      expect((await verify(door, { key: k.key })).data.credits).toBe(1);
      expect((await verify(door, { key: fresh.key })).data.credits).toBe(0);
      expect((await verify(door, { key: k.key })).data.code).toBe("USAGE_EXCEEDED");
    });

    // The next three verify the old key first, so that its record (which names the key it
    // spends from, with that key's balance) is cached when the balance moves or changes.
    const reroll = async (keyId: string) =>
      (await s.call("json", "keys.rerollKey", { keyId, expiration: HOUR })).data as {
        keyId: string;
        key: string;
      };
    const remainingOf = async (keyId: string) =>
      (await s.call("json", "keys.getKey", { keyId })).data.credits?.remaining;

    it("a rerolled key follows its balance through a second reroll", async () => {
      const k0 = await s.seed.key({ credits: { remaining: 5 } });
      const k1 = await reroll(k0.keyId);
      expect((await verify(door, { key: k0.key })).data.credits).toBe(4);
      const k2 = await reroll(k1.keyId);
      expect((await verify(door, { key: k0.key })).data).toMatchObject({
        code: "VALID",
        credits: 3,
      });
      expect(await remainingOf(k2.keyId)).toBe(3);
    });

    it("a rerolled key spends a balance its successor was given after it was cached", async () => {
      const k0 = await s.seed.key();
      const k1 = await reroll(k0.keyId);
      expect((await verify(door, { key: k0.key })).data.credits).toBeUndefined();
      await s.call("json", "keys.updateCredits", { keyId: k1.keyId, operation: "set", value: 1 });
      expect((await verify(door, { key: k0.key })).data).toMatchObject({
        code: "VALID",
        credits: 0,
      });
      expect((await verify(door, { key: k0.key })).data.code).toBe("USAGE_EXCEEDED");
      expect(await remainingOf(k1.keyId)).toBe(0);
    });

    it("a rerolled key keeps a copy of the balance when its successor is deleted for good", async () => {
      const k0 = await s.seed.key({ credits: { remaining: 3 } });
      const k1 = await reroll(k0.keyId);
      expect((await verify(door, { key: k0.key })).data.credits).toBe(2);
      await s.call("json", "keys.deleteKey", { keyId: k1.keyId, permanent: true });
      expect((await verify(door, { key: k0.key })).data).toMatchObject({
        code: "VALID",
        credits: 1,
      });
      expect(await remainingOf(k0.keyId)).toBe(1);
    });
  });

  describe("rate limits", () => {
    it("applies named limits with their cost, ad-hoc limits per key, and all-or-nothing batches", async () => {
      const k = await s.seed.key({
        ratelimits: [
          { name: "minute", limit: 2, duration: 60_000 },
          { name: "month", limit: 200, duration: 2_592_000_000, autoApply: false },
        ],
      });
      const a = await verify(door, { key: k.key, ratelimits: [{ name: "month", cost: 10 }] });
      expect(a.data.ratelimits.find((r: { name: string }) => r.name === "month").remaining).toBe(
        190,
      );
      await verify(door, { key: k.key });
      const blocked = await verify(door, { key: k.key, ratelimits: [{ name: "month", cost: 10 }] });
      expect(blocked.data.code).toBe("RATE_LIMITED");
      const month = blocked.data.ratelimits.find((r: { name: string }) => r.name === "month");
      expect(month).toMatchObject({ exceeded: false, remaining: 190 });
      const adhoc = await verify(door, {
        key: k.key,
        ratelimits: [{ name: "burst", limit: 1, duration: 1000 }],
      });
      expect(adhoc.data.code).toBe("RATE_LIMITED");
      expect(adhoc.data.ratelimits.find((r: { name: string }) => r.name === "burst")).toMatchObject(
        { id: "", autoApply: false, exceeded: false },
      );
    });

    it("shares an identity's limits between its keys", async () => {
      const { externalId } = await s.seed.identity();
      await s.call("json", "identities.updateIdentity", {
        externalId,
        ratelimits: [{ name: "team", limit: 3, duration: HOUR }],
      });
      const a = await s.seed.key({ externalId });
      const b = await s.seed.key({ externalId });
      const codes = [];
      for (const key of [a.key, b.key, a.key, b.key])
        codes.push((await verify(door, { key })).data.code);
      expect(codes).toEqual(["VALID", "VALID", "VALID", "RATE_LIMITED"]);
    });
  });

  describe("changes take effect at once", () => {
    it("new limits of the key and of its identity apply to the next verification", async () => {
      // A request naming no limit evaluates a plan kept per cached record: it must follow
      // every change of the limits, the key's and the identity's.
      const { id: identityId, externalId } = await s.seed.identity();
      const k = await s.seed.key({
        externalId,
        ratelimits: [{ name: "calls", limit: 10, duration: HOUR, autoApply: true }],
      });
      const limits = async () =>
        (await verify(door, { key: k.key })).data.ratelimits.map(
          (r: { name: string; limit: number }) => `${r.name}:${r.limit}`,
        );
      expect(await limits()).toEqual(["calls:10"]);
      await s.call("json", "keys.updateKey", {
        keyId: k.keyId,
        ratelimits: [{ name: "calls", limit: 2, duration: HOUR, autoApply: true }],
      });
      expect(await limits()).toEqual(["calls:2"]);
      await s.call("json", "identities.updateIdentity", {
        identity: identityId,
        ratelimits: [{ name: "team", limit: 7, duration: HOUR, autoApply: true }],
      });
      expect((await limits()).sort()).toEqual(["calls:2", "team:7"]);
      const identity = (await verify(door, { key: k.key })).data.identity;
      expect(identity.ratelimits).toMatchObject([{ name: "team", limit: 7 }]);
      await s.call("json", "keys.updateKey", { keyId: k.keyId, ratelimits: [] });
      expect(await limits()).toEqual(["team:7"]);
    });

    it("an expired key updated with expires: null verifies again; a disabled key stops at once", async () => {
      const k = await s.seed.key({ expires: 1 });
      expect((await verify(door, { key: k.key })).data.code).toBe("EXPIRED");
      await s.call("json", "keys.updateKey", { keyId: k.keyId, expires: null });
      expect((await verify(door, { key: k.key })).data.code).toBe("VALID");
      await s.call("json", "keys.updateKey", { keyId: k.keyId, enabled: false });
      expect((await verify(door, { key: k.key })).data.code).toBe("DISABLED");
    });

    it("a key created after a miss for its secret verifies (no stale negative cache)", async () => {
      const secret = `late_${door}_${++n}_secretvalue`;
      expect((await verify(door, { key: secret })).data.code).toBe("NOT_FOUND");
      const hash = (await import("node:crypto")).createHash("sha256").update(secret).digest("hex");
      await s.call("json", "keys.migrateKeys", {
        migrationId: "late",
        apiId: await s.seed.api(),
        keys: [{ hash }],
      });
      expect((await verify(door, { key: secret })).data.code).toBe("VALID");
    });
  });
});

describe("keys.verifyKey and root keys", () => {
  it("answers a root key with no verify permission at all with 403, a bad root key with 401", async () => {
    const k = await s.seed.key();
    const res = await verify("json", { key: k.key }, await s.seed.rootKey(["api.*.read_key"]));
    expect(res.status).toBe(403);
    expect((await verify("json", { key: k.key }, "root_unknown_key_zz")).status).toBe(401);
  });

  it("needs a root key when VERIFY_REQUIRES_ROOT_KEY is set", async () => {
    const { startServer } = await import("../../harness/server.js");
    const strict = await startServer({ config: { verifyRequiresRootKey: true } });
    try {
      const k = await strict.seed.key();
      expect((await strict.call("json", "keys.verifyKey", { key: k.key }, null)).status).toBe(401);
      expect((await strict.call("json", "keys.verifyKey", { key: k.key })).data.code).toBe("VALID");
    } finally {
      await strict.stop();
    }
  });
});

describe("verification events", () => {
  it("records every verification with its outcome, tags and spent credits", async () => {
    const k = await s.seed.key({ credits: { remaining: 5 } });
    await verify("json", { key: k.key, tags: ["path=/v1/x", "region=eu"], credits: { cost: 2 } });
    await verify("json", { key: "unknown_key_for_events" });
    await s.app.deps.events.flush();
    const rows = await s.db.query<{
      outcome: string;
      tags: string[];
      spent_credits: number;
      key_id: string | null;
    }>(
      "select outcome, tags, spent_credits, key_id from key_verifications where key_id = $1 or (key_id is null and outcome = 'NOT_FOUND') order by time, outcome",
      [k.keyId],
    );
    expect(rows).toContainEqual({
      outcome: "VALID",
      tags: ["path=/v1/x", "region=eu"],
      spent_credits: 2,
      key_id: k.keyId,
    });
    expect(rows).toContainEqual({ outcome: "NOT_FOUND", tags: [], spent_credits: 0, key_id: null });
    const stats = s.app.deps.events.stats();
    expect(stats.recorded + stats.dropped).toBeGreaterThanOrEqual(2);
  });
});
