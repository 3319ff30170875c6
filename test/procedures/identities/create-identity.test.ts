import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;
const ext = (door: string) => `user-${door}-${++n}.x_y`;

describe.each(DOORS)("identities.createIdentity via %s", (door) => {
  describe("ok", () => {
    it("creates an identity with meta and rate limits, audited", async () => {
      const externalId = ext(door);
      const res = await s.call(door, "identities.createIdentity", {
        externalId,
        meta: { plan: "pro", seats: 3, nested: { a: [1, "two", null, true] } },
        ratelimits: [
          { name: "requests", limit: 100, duration: 60000 },
          { name: "tokens", limit: 5, duration: 1000, autoApply: false },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.data.identityId).toMatch(/^id_[a-zA-Z0-9]{16}$/);
      const got = await s.call(door, "identities.getIdentity", { identity: res.data.identityId });
      expect(got.data).toEqual({
        id: res.data.identityId,
        externalId,
        meta: { plan: "pro", seats: 3, nested: { a: [1, "two", null, true] } },
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
      const audit = await s.db.query<{ event: string }>(
        "select event from audit_logs where request_id = $1 order by id",
        [res.requestId],
      );
      expect(audit.map((a) => a.event)).toEqual([
        "identity.create",
        "ratelimit.create",
        "ratelimit.create",
      ]);
    });

    it("omits empty meta and rate limits", async () => {
      const res = await s.call(door, "identities.createIdentity", {
        externalId: ext(door),
        meta: {},
      });
      const got = await s.call(door, "identities.getIdentity", { identity: res.data.identityId });
      expect(Object.keys(got.data).sort()).toEqual(["externalId", "id"]);
    });

    it("treats externalIds as case-sensitive", async () => {
      const base = ext(door);
      expect((await s.call(door, "identities.createIdentity", { externalId: base })).status).toBe(
        200,
      );
      expect(
        (await s.call(door, "identities.createIdentity", { externalId: base.toUpperCase() }))
          .status,
      ).toBe(200);
    });
  });

  describe("conflict", () => {
    it("answers an existing externalId with 409, including a retried call", async () => {
      const externalId = ext(door);
      expect((await s.call(door, "identities.createIdentity", { externalId })).status).toBe(200);
      const before = await s.snapshot();
      const again = await s.call(door, "identities.createIdentity", { externalId });
      expect(again.status).toBe(409);
      expect(again.error?.code).toBe("err:svc:data:identity_already_exists");
      expect(again.error?.title).toBe("Conflict");
      expect(await s.changesSince(before)).toEqual({});
    });

    it("answers create, delete, re-create with 409: the externalId stays reserved", async () => {
      const externalId = ext(door);
      expect((await s.call(door, "identities.createIdentity", { externalId })).status).toBe(200);
      expect((await s.call(door, "identities.deleteIdentity", { externalId })).status).toBe(200);
      const again = await s.call(door, "identities.createIdentity", { externalId });
      expect(again.status).toBe(409);
    });
  });

  describe("invalid input", () => {
    const limit = { name: "requests", limit: 10, duration: 60000 };
    it.each([
      ["no externalId", {}, "/externalId", /required/],
      // Over gRPC an empty string is indistinguishable from none (proto3): "is required".
      ["an empty externalId", { externalId: "" }, "/externalId", /at least 1|required/],
      ["a 256-character externalId", { externalId: "x".repeat(256) }, "/externalId", /at most 255/],
      ["an externalId with a space", { externalId: "a b" }, "/externalId", /pattern/],
      ["an externalId with a slash", { externalId: "a/b" }, "/externalId", /pattern/],
      [
        "51 rate limits",
        {
          externalId: "ok",
          ratelimits: Array.from({ length: 51 }, (_, i) => ({ ...limit, name: `rl${i}x` })),
        },
        "/ratelimits",
        /at most 50/,
      ],
      [
        "a duplicate rate-limit name",
        { externalId: "ok", ratelimits: [limit, limit] },
        "/ratelimits/1/name",
        /unique/,
      ],
      [
        "a rate-limit name of 2 characters",
        { externalId: "ok", ratelimits: [{ ...limit, name: "ab" }] },
        "/ratelimits/0/name",
        /at least 3/,
      ],
      [
        "a rate-limit name of 129 characters",
        { externalId: "ok", ratelimits: [{ ...limit, name: "n".repeat(129) }] },
        "/ratelimits/0/name",
        /at most 128/,
      ],
      [
        "a limit of 0",
        { externalId: "ok", ratelimits: [{ ...limit, limit: 0 }] },
        "/ratelimits/0/limit",
        /at least 1|required/,
      ],
      [
        "a duration under a second",
        { externalId: "ok", ratelimits: [{ ...limit, duration: 999 }] },
        "/ratelimits/0/duration",
        /at least 1000/,
      ],
      [
        "a duration over 30 days",
        { externalId: "ok", ratelimits: [{ ...limit, duration: 2592000001 }] },
        "/ratelimits/0/duration",
        /at most 2592000000/,
      ],
      [
        "a rate limit without a name",
        { externalId: "ok", ratelimits: [{ limit: 1, duration: 1000 }] },
        "/ratelimits/0/name",
        /required/,
      ],
      [
        "a rate limit without a limit",
        { externalId: "ok", ratelimits: [{ name: "abc", duration: 1000 }] },
        "/ratelimits/0/limit",
        // Over gRPC an omitted number is 0: its bound answers.
        /required|at least 1/,
      ],
      [
        "meta over 64 KiB",
        { externalId: "ok", meta: { big: "x".repeat(66_000) } },
        "/meta",
        /65536 bytes/,
      ],
      [
        "meta with 101 properties",
        {
          externalId: "ok",
          meta: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])),
        },
        "/meta",
        /100 top-level/,
      ],
    ])(
      "rejects %s with 400 at its field and writes nothing",
      async (_, body, location, message) => {
        const before = await s.snapshot();
        const res = await s.call(door, "identities.createIdentity", body);
        expect(res.status).toBe(400);
        expect(res.error?.errors).toEqual([{ location, message: expect.stringMatching(message) }]);
        expect(await s.changesSince(before)).toEqual({});
      },
    );
  });

  describe("permission denied", () => {
    it("needs identity.*.create_identity", async () => {
      const key = await s.seed.rootKey(["identity.*.read_identity"]);
      const res = await s.call(door, "identities.createIdentity", { externalId: ext(door) }, key);
      expect(res.status).toBe(403);
      expect(res.error?.detail).toContain("identity.*.create_identity");
    });
  });

  describe("other workspace", () => {
    it("keeps externalIds apart per workspace", async () => {
      const externalId = ext(door);
      expect((await s.call(door, "identities.createIdentity", { externalId })).status).toBe(200);
      const other = await s.seed.rootKey(["*.*.*"], await s.seed.workspace());
      expect((await s.call(door, "identities.createIdentity", { externalId }, other)).status).toBe(
        200,
      );
    });
  });
});

describe("identities.createIdentity /v2 body rules", () => {
  it.each([
    ["meta that is not an object", { externalId: "ok1", meta: [1] }, "/meta"],
    ["meta that is a string", { externalId: "ok2", meta: "x" }, "/meta"],
    [
      "a number beyond 2^53 inside meta",
      { externalId: "ok3", meta: { n: 2 ** 53 + 2 } },
      "/meta/n",
    ],
    [
      "an unknown rate-limit field",
      { externalId: "ok4", ratelimits: [{ name: "abc", limit: 1, duration: 1000, x: 1 }] },
      "/ratelimits/0/x",
    ],
  ])("rejects %s", async (_, body, location) => {
    const res = await s.call("json", "identities.createIdentity", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]?.location).toBe(location);
  });
});
