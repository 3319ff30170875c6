import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { RefillInterval } from "../../../gen/latchkey/v2/common_pb.js";
import { type CreateKeyRequestSchema, KeySchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { looksLikeLatchkeyKey } from "../../../src/domain/key-format.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// keys.createKey: issues a key for an API with every setting a key has, returns its secret
// once and stores only its hash; roles must exist, missing permissions and identities are
// created.

const s = useServer();
let n = 0;
const uniq = (p: string) => `${p}${++n}`;
const BASE58 = "[1-9A-HJ-NP-Za-km-z]";

describe("keys.createKey", () => {
  it("round-trips every field through getKey", async () => {
    const apiId = await s.seed.api();
    const role = uniq("reader");
    await s.api.permissions.createRole({ name: role, permissions: [`${role}.docs.read`] });
    const externalId = uniq("user.");
    const meta = {
      plan: "pro",
      nested: { deep: { list: [1, "zwei", { drei: 3 }], nothing: null } },
      "ünïcødé ✓": "日本語 😀",
    };
    const credits = {
      remaining: 500n,
      refill: { interval: RefillInterval.MONTHLY, amount: 1000n, refillDay: 31 },
    };
    const res = await s.api.keys.createKey({
      apiId,
      prefix: "sk_live",
      name: "My key ✓",
      byteLength: 32,
      externalId,
      meta,
      roles: [role, role],
      permissions: [`${role}.docs.write`, "billing:read", `${role}.docs.write`],
      expires: 4102444800000n,
      credits,
      ratelimits: [
        { name: "requests", limit: 100n, duration: 60000n },
        { name: "tokens", limit: 5n, duration: 1000n, autoApply: false },
      ],
      enabled: false,
    });
    const created = res.data;
    expect(created?.keyId).toMatch(/^key_[a-zA-Z0-9]{16}$/);
    // A new API's keys are checksummed: 32 bytes are 44 Base58 digits, then 6 of checksum.
    expect(created?.key).toMatch(new RegExp(`^sk_live_${BASE58}{50}$`));
    expect(looksLikeLatchkeyKey(created?.key ?? "")).toBe(true);
    const got = (await s.api.keys.getKey({ keyId: created?.keyId ?? "" })).data;
    expect(got?.identity?.id).toMatch(/^id_/);
    expect(got?.ratelimits.map((r) => r.id)).toEqual([
      expect.stringMatching(/^rl_/),
      expect.stringMatching(/^rl_/),
    ]);
    expect(got).toEqual(
      create(KeySchema, {
        keyId: created?.keyId,
        start: created?.key.slice(0, "sk_live_".length + 4),
        enabled: false,
        createdAt: BigInt(s.clock.now()),
        name: "My key ✓",
        meta,
        expires: 4102444800000n,
        credits,
        permissions: ["billing:read", `${role}.docs.read`, `${role}.docs.write`].sort(),
        roles: [role],
        identity: { id: got?.identity?.id, externalId },
        ratelimits: [
          {
            id: got?.ratelimits[0]?.id,
            name: "requests",
            limit: 100n,
            duration: 60000n,
            autoApply: true,
          },
          { id: got?.ratelimits[1]?.id, name: "tokens", limit: 5n, duration: 1000n },
        ],
      }),
    );
  });

  it("makes a minimal key: 16 bytes, no prefix, enabled, unlimited", async () => {
    const { data } = await s.api.keys.createKey({ apiId: await s.seed.api() });
    expect(data?.key).toMatch(new RegExp(`^${BASE58}{28}$`));
    const got = (await s.api.keys.getKey({ keyId: data?.keyId ?? "" })).data;
    expect(got).toEqual(
      create(KeySchema, {
        keyId: data?.keyId,
        start: data?.key.slice(0, 4),
        enabled: true,
        createdAt: BigInt(s.clock.now()),
      }),
    );
  });

  it("stores only the hash and start, and audits the creation", async () => {
    const res = await s.api.keys.createKey({
      apiId: await s.seed.api(),
      prefix: "pfx",
      permissions: [uniq("p.new.")],
    });
    const secret = res.data?.key ?? "";
    const dump = JSON.stringify(await s.snapshot());
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(secret.slice(5));
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by event",
      [res.meta?.requestId],
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
    const identityOf = async (externalId: string) => {
      const { data } = await s.api.keys.createKey({ apiId, externalId });
      return (await s.api.keys.getKey({ keyId: data?.keyId ?? "" })).data?.identity;
    };
    expect(await identityOf(externalId)).toMatchObject({ id, externalId });
    const fresh = uniq("fresh.");
    const first = await identityOf(fresh);
    const second = await identityOf(fresh);
    expect(first?.externalId).toBe(fresh);
    expect(second?.id).toBe(first?.id);
  });

  it("accepts an expiry in the past (the key is expired at once)", async () => {
    const { data } = await s.api.keys.createKey({ apiId: await s.seed.api(), expires: 0n });
    expect((await s.api.keys.getKey({ keyId: data?.keyId ?? "" })).data?.expires).toBe(0n);
  });

  it("keeps the last of repeated rate-limit names", async () => {
    const { data } = await s.api.keys.createKey({
      apiId: await s.seed.api(),
      ratelimits: [
        { name: "dup", limit: 1n, duration: 1000n },
        { name: "dup", limit: 2n, duration: 2000n },
      ],
    });
    const got = (await s.api.keys.getKey({ keyId: data?.keyId ?? "" })).data;
    expect(got?.ratelimits).toEqual([
      expect.objectContaining({ name: "dup", limit: 2n, duration: 2000n, autoApply: true }),
    ]);
  });

  describe("refuses invalid input with 400 at its field, writing nothing", () => {
    type Body = MessageInitShape<typeof CreateKeyRequestSchema>;
    const r = { name: "requests", limit: 10n, duration: 60000n };
    const daily = RefillInterval.DAILY;
    const monthly = RefillInterval.MONTHLY;
    const cases: [string, Body, string][] = [
      ["a prefix of 17 characters", { prefix: "p".repeat(17) }, "/prefix"],
      ["a prefix with a dash", { prefix: "sk-live" }, "/prefix"],
      ["an empty name", { name: "" }, "/name"],
      ["a name of 256 characters", { name: "n".repeat(256) }, "/name"],
      ["byteLength 15", { byteLength: 15 }, "/byteLength"],
      ["byteLength 256", { byteLength: 256 }, "/byteLength"],
      ["an externalId with a space", { externalId: "a b" }, "/externalId"],
      ["expires below 0", { expires: -1n }, "/expires"],
      ["expires after 2100", { expires: 4102444800001n }, "/expires"],
      [
        "51 rate limits",
        { ratelimits: Array.from({ length: 51 }, (_, i) => ({ ...r, name: `rl${i}x` })) },
        "/ratelimits",
      ],
      ["a rate limit of 0", { ratelimits: [{ ...r, limit: 0n }] }, "/ratelimits/0/limit"],
      [
        "a rate-limit duration of 999",
        { ratelimits: [{ ...r, duration: 999n }] },
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
        { credits: { refill: { interval: daily, amount: 10n } } },
        "/credits/remaining",
      ],
      [
        "refillDay with daily",
        { credits: { remaining: 1n, refill: { interval: daily, amount: 10n, refillDay: 3 } } },
        "/credits/refill/refillDay",
      ],
      [
        "monthly without refillDay",
        { credits: { remaining: 1n, refill: { interval: monthly, amount: 10n } } },
        "/credits/refill/refillDay",
      ],
      [
        "refillDay 32",
        { credits: { remaining: 1n, refill: { interval: monthly, amount: 10n, refillDay: 32 } } },
        "/credits/refill/refillDay",
      ],
      [
        "a refill amount of 0",
        { credits: { remaining: 1n, refill: { interval: daily, amount: 0n } } },
        "/credits/refill/amount",
      ],
      ["negative remaining", { credits: { remaining: -1n } }, "/credits/remaining"],
    ];

    it("no apiId", async () => {
      const before = await s.snapshot();
      const r = await refusal(s.api.keys.createKey({}));
      expect(r.status).toBe(400);
      expect(r.errors.map((e) => e.location)).toContain("/apiId");
      expect(await s.changesSince(before)).toEqual({});
    });

    it.each(cases)("%s", async (_, body, location) => {
      const apiId = await s.seed.api();
      const before = await s.snapshot();
      const r = await refusal(s.api.keys.createKey({ ...body, apiId }));
      expect(r.code).toBe(Code.InvalidArgument);
      expect(r.status).toBe(400);
      expect(r.errors.map((e) => e.location)).toContain(location);
      expect(await s.changesSince(before)).toEqual({});
    });
  });

  it("answers an unknown, deleted or foreign API with 404 api_not_found", async () => {
    const deleted = await s.seed.api();
    await s.api.apis.deleteApi({ apiId: deleted });
    const foreign = await s.seed.api(await s.seed.workspace());
    for (const apiId of ["api_nope", deleted, foreign]) {
      const r = await refusal(s.api.keys.createKey({ apiId }));
      expect(r, apiId).toMatchObject({ status: 404, errorCode: "err:svc:data:api_not_found" });
    }
  });

  it("answers an unknown role with 404 role_not_found naming it, writing nothing", async () => {
    const apiId = await s.seed.api();
    const before = await s.snapshot();
    const r = await refusal(
      s.api.keys.createKey({ apiId, roles: ["no_such_role"], externalId: uniq("x.") }),
    );
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
    expect(r.detail).toContain("no_such_role");
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers an externalId of a deleted identity with 409", async () => {
    const { externalId } = await s.seed.identity();
    await s.api.identities.deleteIdentity({ externalId });
    const r = await refusal(s.api.keys.createKey({ apiId: await s.seed.api(), externalId }));
    expect(r).toMatchObject({ status: 409, errorCode: "err:svc:data:identity_already_exists" });
  });

  it("answers recoverable keys with 412", async () => {
    const r = await refusal(s.api.keys.createKey({ apiId: await s.seed.api(), recoverable: true }));
    expect(r).toMatchObject({
      status: 412,
      errorCode: "err:svc:application:precondition_failed",
    });
  });

  it("needs api.<apiId>.create_key, checked after the API lookup", async () => {
    const apiId = await s.seed.api();
    const reader = s.as(await s.seed.rootKey(["api.*.read_key"]));
    const r = await refusal(reader.keys.createKey({ apiId }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${apiId}.create_key`);
    expect((await refusal(reader.keys.createKey({ apiId: "api_unknown" }))).status).toBe(404);
    const narrow = s.as(await s.seed.rootKey([`api.${apiId}.create_key`]));
    expect((await narrow.keys.createKey({ apiId })).data?.keyId).toMatch(/^key_/);
  });
});
