import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;
const uniq = (p: string) => `${p}${++n}`;

describe.each(DOORS)("keys.createKey via %s", (door) => {
  describe("ok", () => {
    it("round-trips every field through getKey", async () => {
      const apiId = await s.seed.api();
      const role = uniq("reader");
      await s.call(door, "permissions.createRole", {
        name: role,
        permissions: [`${role}.docs.read`],
      });
      const externalId = uniq("user.");
      const meta = {
        plan: "pro",
        nested: { deep: { list: [1, "zwei", { drei: 3 }], nothing: null } },
        "ünïcødé ✓": "日本語 😀",
      };
      const res = await s.call(door, "keys.createKey", {
        apiId,
        prefix: "sk_live",
        name: "My key ✓",
        byteLength: 32,
        externalId,
        meta,
        roles: [role, role],
        permissions: [`${role}.docs.write`, "billing:read", `${role}.docs.write`],
        expires: 4102444800000,
        credits: { remaining: 500, refill: { interval: "monthly", amount: 1000, refillDay: 31 } },
        ratelimits: [
          { name: "requests", limit: 100, duration: 60000 },
          { name: "tokens", limit: 5, duration: 1000, autoApply: false },
        ],
        enabled: false,
      });
      expect(res.status).toBe(200);
      expect(res.data.keyId).toMatch(/^key_[a-zA-Z0-9]{16}$/);
      expect(res.data.key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]{40,46}$/);
      const got = await s.call(door, "keys.getKey", { keyId: res.data.keyId });
      expect(got.status).toBe(200);
      expect(got.data).toEqual({
        keyId: res.data.keyId,
        start: res.data.key.slice(0, "sk_live_".length + 4),
        enabled: false,
        createdAt: s.clock.now(),
        name: "My key ✓",
        meta,
        expires: 4102444800000,
        credits: { remaining: 500, refill: { interval: "monthly", amount: 1000, refillDay: 31 } },
        permissions: ["billing:read", `${role}.docs.read`, `${role}.docs.write`].sort(),
        roles: [role],
        identity: { id: expect.stringMatching(/^id_/), externalId },
        ratelimits: [
          {
            id: expect.stringMatching(/^rl_/),
            name: "requests",
            limit: 100,
            duration: 60000,
            autoApply: true,
          },
          {
            id: expect.stringMatching(/^rl_/),
            name: "tokens",
            limit: 5,
            duration: 1000,
            autoApply: false,
          },
        ],
      });
    });

    it("makes a minimal key: 16 bytes, no prefix, enabled, unlimited", async () => {
      const apiId = await s.seed.api();
      const res = await s.call(door, "keys.createKey", { apiId });
      expect(res.data.key).toMatch(/^[1-9A-HJ-NP-Za-km-z]{20,23}$/);
      const got = await s.call(door, "keys.getKey", { keyId: res.data.keyId });
      expect(got.data).toEqual({
        keyId: res.data.keyId,
        start: res.data.key.slice(0, 4),
        enabled: true,
        createdAt: s.clock.now(),
      });
    });

    it("stores only the hash and start, and audits the creation", async () => {
      const res = await s.call(door, "keys.createKey", {
        apiId: await s.seed.api(),
        prefix: "pfx",
        permissions: [uniq("p.new.")],
      });
      const dump = JSON.stringify(await s.snapshot());
      expect(dump).not.toContain(res.data.key);
      expect(dump).not.toContain(res.data.key.slice(5));
      const audit = await s.db.query<{ event: string }>(
        "select event from audit_logs where request_id = $1 order by event",
        [res.requestId],
      );
      expect(audit.map((a) => a.event)).toEqual([
        "authorization.connect_permission_and_key",
        "key.create",
        "permission.create",
      ]);
    });

    it("links an existing identity by externalId and creates a missing one once", async () => {
      const { id, externalId } = await s.seed.identity();
      const apiId = await s.seed.api();
      const a = await s.call(door, "keys.createKey", { apiId, externalId });
      expect((await s.call(door, "keys.getKey", { keyId: a.data.keyId })).data.identity).toEqual({
        id,
        externalId,
      });
      const fresh = uniq("fresh.");
      const b = await s.call(door, "keys.createKey", { apiId, externalId: fresh });
      const c = await s.call(door, "keys.createKey", { apiId, externalId: fresh });
      const ib = (await s.call(door, "keys.getKey", { keyId: b.data.keyId })).data.identity;
      const ic = (await s.call(door, "keys.getKey", { keyId: c.data.keyId })).data.identity;
      expect(ib.externalId).toBe(fresh);
      expect(ib.id).toBe(ic.id);
    });

    it("accepts an expiry in the past (the key is expired at once)", async () => {
      const res = await s.call(door, "keys.createKey", { apiId: await s.seed.api(), expires: 0 });
      expect(res.status).toBe(200);
    });

    it("keeps the last of repeated rate-limit names", async () => {
      const res = await s.call(door, "keys.createKey", {
        apiId: await s.seed.api(),
        ratelimits: [
          { name: "dup", limit: 1, duration: 1000 },
          { name: "dup", limit: 2, duration: 2000 },
        ],
      });
      const got = await s.call(door, "keys.getKey", { keyId: res.data.keyId });
      expect(got.data.ratelimits).toEqual([
        { id: expect.any(String), name: "dup", limit: 2, duration: 2000, autoApply: true },
      ]);
    });
  });

  describe("invalid input", () => {
    const r = { name: "requests", limit: 10, duration: 60000 };
    it.each([
      ["no apiId", {}, "/apiId"],
      ["a prefix of 17 characters", { prefix: "p".repeat(17) }, "/prefix"],
      ["a prefix with a dash", { prefix: "sk-live" }, "/prefix"],
      ["an empty name", { name: "" }, "/name"],
      ["a name of 256 characters", { name: "n".repeat(256) }, "/name"],
      ["byteLength 15", { byteLength: 15 }, "/byteLength"],
      ["byteLength 256", { byteLength: 256 }, "/byteLength"],
      ["an externalId with a space", { externalId: "a b" }, "/externalId"],
      ["expires below 0", { expires: -1 }, "/expires"],
      ["expires after 2100", { expires: 4102444800001 }, "/expires"],
      [
        "51 rate limits",
        { ratelimits: Array.from({ length: 51 }, (_, i) => ({ ...r, name: `rl${i}x` })) },
        "/ratelimits",
      ],
      ["a rate limit of 0", { ratelimits: [{ ...r, limit: 0 }] }, "/ratelimits/0/limit"],
      [
        "a rate-limit duration of 999",
        { ratelimits: [{ ...r, duration: 999 }] },
        "/ratelimits/0/duration",
      ],
      ["101 roles", { roles: Array.from({ length: 101 }, (_, i) => `r${i}`) }, "/roles"],
      ["a role of 101 characters", { roles: ["r".repeat(101)] }, "/roles/0"],
      [
        "1001 permissions",
        { permissions: Array.from({ length: 1001 }, (_, i) => `p.x${i}`) },
        "/permissions",
      ],
      ["a permission of 2 characters", { permissions: ["ab"] }, "/permissions/0"],
      ["a permission of 101 characters", { permissions: ["p".repeat(101)] }, "/permissions/0"],
      ["a permission with a space", { permissions: ["docs read"] }, "/permissions/0"],
      ["meta over 64 KiB", { meta: { v: "m".repeat(66_000) } }, "/meta"],
      [
        "a refill with unlimited credits",
        { credits: { refill: { interval: "daily", amount: 10 } } },
        "/credits/remaining",
      ],
      [
        "refillDay with daily",
        { credits: { remaining: 1, refill: { interval: "daily", amount: 10, refillDay: 3 } } },
        "/credits/refill/refillDay",
      ],
      [
        "monthly without refillDay",
        { credits: { remaining: 1, refill: { interval: "monthly", amount: 10 } } },
        "/credits/refill/refillDay",
      ],
      [
        "refillDay 32",
        { credits: { remaining: 1, refill: { interval: "monthly", amount: 10, refillDay: 32 } } },
        "/credits/refill/refillDay",
      ],
      [
        "a refill amount of 0",
        { credits: { remaining: 1, refill: { interval: "daily", amount: 0 } } },
        "/credits/refill/amount",
      ],
      ["negative remaining", { credits: { remaining: -1 } }, "/credits/remaining"],
    ])("rejects %s with 400 at its field and writes nothing", async (_, body, location) => {
      const apiId = await s.seed.api();
      const before = await s.snapshot();
      const res = await s.call(
        door,
        "keys.createKey",
        location === "/apiId" ? body : { apiId, ...body },
      );
      expect(res.status).toBe(400);
      expect(res.error?.errors?.map((e) => e.location)).toContain(location);
      expect(await s.changesSince(before)).toEqual({});
    });
  });

  describe("not found", () => {
    it("answers an unknown, deleted or foreign API with 404 api_not_found", async () => {
      const deleted = await s.seed.api();
      await s.call(door, "apis.deleteApi", { apiId: deleted });
      const foreign = await s.seed.api(await s.seed.workspace());
      for (const apiId of ["api_nope", deleted, foreign]) {
        const res = await s.call(door, "keys.createKey", { apiId });
        expect(res.status).toBe(404);
        expect(res.error?.code).toBe("err:svc:data:api_not_found");
      }
    });

    it("answers an unknown role with 404 role_not_found naming it, writing nothing", async () => {
      const apiId = await s.seed.api();
      const before = await s.snapshot();
      const res = await s.call(door, "keys.createKey", {
        apiId,
        roles: ["no_such_role"],
        externalId: uniq("x."),
      });
      expect(res.status).toBe(404);
      expect(res.error?.code).toBe("err:svc:data:role_not_found");
      expect(res.error?.detail).toContain("no_such_role");
      expect(await s.changesSince(before)).toEqual({});
    });
  });

  describe("conflict and preconditions", () => {
    it("answers an externalId of a deleted identity with 409", async () => {
      const { externalId } = await s.seed.identity();
      await s.call(door, "identities.deleteIdentity", { externalId });
      const res = await s.call(door, "keys.createKey", { apiId: await s.seed.api(), externalId });
      expect(res.status).toBe(409);
      expect(res.error?.code).toBe("err:svc:data:identity_already_exists");
    });

    it("answers recoverable keys with 412", async () => {
      const res = await s.call(door, "keys.createKey", {
        apiId: await s.seed.api(),
        recoverable: true,
      });
      expect(res.status).toBe(412);
      expect(res.error?.code).toBe("err:svc:application:precondition_failed");
    });
  });

  describe("permission denied", () => {
    it("needs api.<apiId>.create_key, checked after the API lookup", async () => {
      const apiId = await s.seed.api();
      const key = await s.seed.rootKey(["api.*.read_key"]);
      const res = await s.call(door, "keys.createKey", { apiId }, key);
      expect(res.status).toBe(403);
      expect(res.error?.detail).toContain(`api.${apiId}.create_key`);
      expect((await s.call(door, "keys.createKey", { apiId: "api_unknown" }, key)).status).toBe(
        404,
      );
      const narrow = await s.seed.rootKey([`api.${apiId}.create_key`]);
      expect((await s.call(door, "keys.createKey", { apiId }, narrow)).status).toBe(200);
    });
  });
});
