import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { RefillInterval } from "../../../gen/latchkey/v2/common_pb.js";
import type { CreateIdentityRequestSchema } from "../../../gen/latchkey/v2/identities_pb.js";
import { currentEngine } from "../../harness/engine.js";
import { countOf, together } from "../../harness/race.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// identities.createIdentity: creates an identity of the caller's workspace under an
// externalId unique in that workspace (for good: a deleted one's stays taken), with optional
// metadata and named rate limits, audited as identity.create and ratelimit.create.

const s = useServer();
let n = 0;
const ext = () => `user-${++n}.x_y`;
const limit = { name: "requests", limit: 10n, duration: 60000n };

describe("identities.createIdentity", () => {
  it("creates an identity with meta and rate limits, audited", async () => {
    const externalId = ext();
    const meta = { plan: "pro", seats: 3, nested: { a: [1, "two", null, true] } };
    const res = await s.api.identities.createIdentity({
      externalId,
      meta,
      ratelimits: [
        { name: "requests", limit: 100n, duration: 60000n },
        { name: "tokens", limit: 5n, duration: 1000n, autoApply: false },
      ],
    });
    const identityId = res.data?.identityId as string;
    expect(identityId).toMatch(/^id_[a-zA-Z0-9]{16}$/);
    const got = await s.api.identities.getIdentity({ identity: identityId });
    expect(got.data).toMatchObject({ id: identityId, externalId, meta });
    expect(got.data?.ratelimits).toMatchObject([
      { id: expect.stringMatching(/^rl_/), name: "requests", limit: 100n, duration: 60000n },
      { id: expect.stringMatching(/^rl_/), name: "tokens", limit: 5n, duration: 1000n },
    ]);
    expect(got.data?.ratelimits.map((r) => r.autoApply)).toEqual([true, false]);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by id",
      [res.meta?.requestId],
    );
    expect(audit.map((a) => a.event)).toEqual([
      "identity.create",
      "ratelimit.create",
      "ratelimit.create",
    ]);
  });

  it("omits empty meta and rate limits", async () => {
    const res = await s.api.identities.createIdentity({ externalId: ext(), meta: {} });
    const got = await s.api.identities.getIdentity({ identity: res.data?.identityId });
    expect(got.data?.meta).toBeUndefined();
    expect(got.data?.ratelimits).toEqual([]);
    const rows = await s.db.query("select meta from identities where id = $1", [
      res.data?.identityId,
    ]);
    expect(rows).toEqual([{ meta: null }]);
  });

  it("treats externalIds as case-sensitive", async () => {
    const base = ext();
    await s.api.identities.createIdentity({ externalId: base });
    const upper = await s.api.identities.createIdentity({ externalId: base.toUpperCase() });
    expect(upper.data?.identityId).toMatch(/^id_/);
  });

  it("answers an existing externalId with 409, including a retried call, and writes nothing", async () => {
    const externalId = ext();
    await s.api.identities.createIdentity({ externalId });
    const before = await s.snapshot();
    const r = await refusal(s.api.identities.createIdentity({ externalId }));
    expect(r.code).toBe(Code.AlreadyExists);
    expect(r).toMatchObject({
      status: 409,
      errorCode: "err:svc:data:identity_already_exists",
      title: "Conflict",
    });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers create, delete, re-create with 409: the externalId stays reserved", async () => {
    const externalId = ext();
    await s.api.identities.createIdentity({ externalId });
    await s.api.identities.deleteIdentity({ externalId });
    expect((await refusal(s.api.identities.createIdentity({ externalId }))).status).toBe(409);
  });

  it.skipIf(currentEngine() !== "postgres")(
    "lets exactly one of 20 concurrent creations with one externalId succeed",
    async () => {
      const externalId = `race_${Date.now()}`;
      const create = () => s.api.identities.createIdentity({ externalId });
      const results = await together(
        Array.from({ length: 20 }, () => create),
        [200, 409],
      );
      expect(countOf(results, 200)).toBe(1);
      const rows = await s.db.query("select 1 from identities where external_id = $1", [
        externalId,
      ]);
      expect(rows).toHaveLength(1);
    },
  );

  const ok = "ok";
  const invalid: [string, MessageInitShape<typeof CreateIdentityRequestSchema>, string, RegExp][] =
    [
      ["no externalId", {}, "/externalId", /is required/],
      ["a 256-character externalId", { externalId: "x".repeat(256) }, "/externalId", /at most 255/],
      ["an externalId with a space", { externalId: "a b" }, "/externalId", /pattern/],
      ["an externalId with a slash", { externalId: "a/b" }, "/externalId", /pattern/],
      [
        "51 rate limits",
        {
          externalId: ok,
          ratelimits: Array.from({ length: 51 }, (_, i) => ({ ...limit, name: `rl${i}x` })),
        },
        "/ratelimits",
        /at most 50/,
      ],
      [
        "a duplicate rate-limit name",
        { externalId: ok, ratelimits: [limit, limit] },
        "/ratelimits/1/name",
        /unique/,
      ],
      [
        "a rate-limit name of 2 characters",
        { externalId: ok, ratelimits: [{ ...limit, name: "ab" }] },
        "/ratelimits/0/name",
        /at least 3/,
      ],
      [
        "a rate-limit name of 129 characters",
        { externalId: ok, ratelimits: [{ ...limit, name: "n".repeat(129) }] },
        "/ratelimits/0/name",
        /at most 128/,
      ],
      [
        "a rate limit without a name",
        { externalId: ok, ratelimits: [{ limit: 1n, duration: 1000n }] },
        "/ratelimits/0/name",
        /is required/,
      ],
      [
        "a limit of 0, which is no limit",
        { externalId: ok, ratelimits: [{ ...limit, limit: 0n }] },
        "/ratelimits/0/limit",
        /is required|at least 1/,
      ],
      [
        "a duration under a second",
        { externalId: ok, ratelimits: [{ ...limit, duration: 999n }] },
        "/ratelimits/0/duration",
        /at least 1000/,
      ],
      [
        "a duration over 30 days",
        { externalId: ok, ratelimits: [{ ...limit, duration: 2592000001n }] },
        "/ratelimits/0/duration",
        /at most 2592000000/,
      ],
      [
        "meta over 64 KiB",
        { externalId: ok, meta: { big: "x".repeat(66_000) } },
        "/meta",
        /65536 bytes/,
      ],
      [
        "meta with 101 properties",
        {
          externalId: ok,
          meta: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])),
        },
        "/meta",
        /100 top-level/,
      ],
    ];
  it.each(invalid)(
    "rejects %s with 400 at its field and writes nothing",
    async (_, body, location, message) => {
      const before = await s.snapshot();
      const r = await refusal(s.api.identities.createIdentity(body));
      expect(r.code).toBe(Code.InvalidArgument);
      expect(r).toMatchObject({ status: 400, errorCode: "err:svc:application:invalid_input" });
      expect(r.errors).toEqual([{ location, message: expect.stringMatching(message) }]);
      expect(await s.changesSince(before)).toEqual({});
    },
  );

  it("needs identity.*.create_identity", async () => {
    const key = await s.seed.rootKey(["identity.*.read_identity"]);
    const before = await s.snapshot();
    const r = await refusal(s.as(key).identities.createIdentity({ externalId: ext() }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("identity.*.create_identity");
    expect(await s.changesSince(before)).toEqual({});
  });

  it("keeps externalIds apart per workspace", async () => {
    const externalId = ext();
    await s.api.identities.createIdentity({ externalId });
    const other = s.as(await s.seed.rootKey(["*.*.*"], await s.seed.workspace()));
    const theirs = await other.identities.createIdentity({ externalId });
    expect(theirs.data?.identityId).toMatch(/^id_/);
  });
});

describe("on the /v2 JSON door", () => {
  it.each([
    ["an empty externalId, unlike none", { externalId: "" }, "/externalId", /at least 1/],
    ["meta that is not an object", { externalId: "ok1", meta: [1] }, "/meta", /object/],
    ["meta that is a string", { externalId: "ok2", meta: "x" }, "/meta", /object/],
    [
      "a number beyond 2^53 inside meta",
      { externalId: "ok3", meta: { n: 2 ** 53 + 2 } },
      "/meta/n",
      /./,
    ],
    [
      "an unknown rate-limit field",
      { externalId: "ok4", ratelimits: [{ name: "abc", limit: 1, duration: 1000, x: 1 }] },
      "/ratelimits/0/x",
      /./,
    ],
    [
      "a rate limit without a limit",
      { externalId: "ok5", ratelimits: [{ name: "abc", duration: 1000 }] },
      "/ratelimits/0/limit",
      /is required/,
    ],
  ])("rejects %s with 400", async (_, body, location, message) => {
    const res = await s.call("json", "identities.createIdentity", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]).toEqual({ location, message: expect.stringMatching(message) });
  });
});

describe("identities.createIdentity credits", () => {
  it("creates a credit pool with a refill, shown by getIdentity and listIdentities", async () => {
    const externalId = ext();
    const res = await s.api.identities.createIdentity({
      externalId,
      credits: { remaining: 7n, refill: { interval: RefillInterval.DAILY, amount: 7n } },
    });
    const id = res.data?.identityId as string;
    const want = { remaining: 7n, refill: { interval: RefillInterval.DAILY, amount: 7n } };
    expect((await s.api.identities.getIdentity({ identity: id })).data?.credits).toMatchObject(
      want,
    );
    const listed = await s.api.identities.listIdentities({ search: externalId });
    expect(listed.data.map((i) => i.credits)).toMatchObject([want]);
  });

  it.each([
    [
      "a monthly refill without refillDay",
      { remaining: 1n, refill: { interval: RefillInterval.MONTHLY, amount: 5n } },
      "/credits/refill/refillDay",
    ],
    [
      "a daily refill with refillDay",
      { remaining: 1n, refill: { interval: RefillInterval.DAILY, amount: 5n, refillDay: 3 } },
      "/credits/refill/refillDay",
    ],
    ["a remaining above 2^53 - 1", { remaining: 9007199254740992n }, "/credits/remaining"],
  ])("rejects %s with 400 and writes nothing", async (_, credits, location) => {
    const before = await s.snapshot();
    const r = await refusal(s.api.identities.createIdentity({ externalId: ext(), credits }));
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toEqual([location]);
    expect(await s.changesSince(before)).toEqual({});
  });
});
