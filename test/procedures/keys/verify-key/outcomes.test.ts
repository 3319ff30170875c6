import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../../harness/server.js";
import { codeName, HOUR, NOT_FOUND_ANSWER, verifierOf } from "./calls.js";

// keys.verifyKey checks a secret key and answers, with HTTP 200 whatever the outcome, one of
// its codes and what the key carries. Here: each code and its answer, and changes to a key
// that apply from the next verification on.

const s = useServer();
const verify = verifierOf(s);
let n = 0;

describe("keys.verifyKey outcomes", () => {
  it("VALID with the key's fields, meta verbatim, credits after the cost", async () => {
    const role = `vrole_${++n}`;
    await s.api.permissions.createRole({ name: role, permissions: [`${role}.docs.read`] });
    const { id: identityId, externalId } = await s.seed.identity();
    await s.api.identities.updateIdentity({
      identity: identityId,
      meta: { tier: "gold" },
      ratelimits: [
        { name: "shared", limit: 100n, duration: BigInt(HOUR) },
        { name: "shadowed", limit: 100n, duration: BigInt(HOUR) },
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
    const data = await verify({ key: k.key });
    expect(data).toMatchObject({
      valid: true,
      code: VerifyKeyCode.VALID,
      keyId: k.keyId,
      name: "verified",
      expires: 4102444800000n,
      credits: 9n,
      enabled: true,
      permissions: ["billing.*", `${role}.docs.read`],
      roles: [role],
      identity: {
        id: identityId,
        externalId,
        meta: { tier: "gold" },
        // The identity's "shadowed" is the key's own: only "shared" is the identity's.
        ratelimits: [
          {
            id: expect.stringMatching(/^rl_/),
            name: "shared",
            limit: 100n,
            duration: BigInt(HOUR),
            autoApply: true,
          },
        ],
      },
    });
    expect(data.meta).toEqual(meta);
    expect([...data.ratelimits].sort((a, b) => a.name.localeCompare(b.name))).toMatchObject([
      { name: "shadowed", limit: 5n, remaining: 4n, exceeded: false, autoApply: true },
      { name: "shared", limit: 100n, remaining: 99n, exceeded: false },
    ]);
  });

  it.each([
    ["an unknown key", async () => "sk_not_a_real_key"],
    [
      "a deleted key",
      async () => {
        const k = await s.seed.key();
        await s.api.keys.deleteKey({ keyId: k.keyId });
        return k.key;
      },
    ],
    [
      "a key of a deleted API",
      async () => {
        const k = await s.seed.key();
        await s.api.apis.deleteApi({ apiId: k.apiId });
        return k.key;
      },
    ],
  ])("NOT_FOUND for %s, with only valid and code", async (_, secret) => {
    const data = await verify({ key: await secret(), credits: { cost: 1n } });
    expect(data).toEqual(NOT_FOUND_ANSWER);
  });

  // A root key of another workspace: in scope.test.ts, on an instance of two workspaces (a
  // second one here would make every header-less verification of this file 401).
  it("NOT_FOUND for a root key without verify_key on the key's API", async () => {
    const k = await s.seed.key();
    const elsewhere = await s.seed.rootKey(["api.api_elsewhere.verify_key"]);
    expect(await verify({ key: k.key }, elsewhere)).toEqual(NOT_FOUND_ANSWER);
    const right = await s.seed.rootKey([`api.${k.apiId}.verify_key`]);
    expect((await verify({ key: k.key }, right)).code).toBe(VerifyKeyCode.VALID);
  });

  it("DISABLED, EXPIRED and INSUFFICIENT_PERMISSIONS", async () => {
    const disabled = await s.seed.key({ enabled: false });
    expect(await verify({ key: disabled.key })).toMatchObject({
      valid: false,
      code: VerifyKeyCode.DISABLED,
      enabled: false,
    });
    const expired = await s.seed.key({ expires: s.clock.now() - 1 });
    expect((await verify({ key: expired.key })).code).toBe(VerifyKeyCode.EXPIRED);
    const limited = await s.seed.key({ permissions: ["docs.read"] });
    const data = await verify({ key: limited.key, permissions: "docs.read AND docs.write" });
    expect(data).toMatchObject({
      valid: false,
      code: VerifyKeyCode.INSUFFICIENT_PERMISSIONS,
      permissions: ["docs.read"],
    });
  });

  it("RATE_LIMITED once an auto-applied limit is used up, until the window ends", async () => {
    s.clock.set(Date.parse("2026-07-01T10:00:00Z"));
    const k = await s.seed.key({
      ratelimits: [{ name: "per_minute", limit: 2, duration: 60_000 }],
    });
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push(codeName(await verify({ key: k.key })));
    expect(codes).toEqual(["VALID", "VALID", "RATE_LIMITED"]);
    const limited = await verify({ key: k.key });
    expect(limited.ratelimits).toMatchObject([
      {
        id: expect.stringMatching(/^rl_/),
        name: "per_minute",
        limit: 2n,
        duration: 60_000n,
        remaining: 0n,
        reset: BigInt(Date.parse("2026-07-01T10:01:00Z")),
        exceeded: true,
        autoApply: true,
      },
    ]);
    s.clock.set(Date.parse("2026-07-01T10:01:00Z"));
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.VALID);
  });

  it("USAGE_EXCEEDED when the balance is below the cost, spending nothing", async () => {
    const k = await s.seed.key({ credits: { remaining: 5 } });
    expect(await verify({ key: k.key, credits: { cost: 15n } })).toMatchObject({
      valid: false,
      code: VerifyKeyCode.USAGE_EXCEEDED,
      credits: 5n,
    });
    expect(await verify({ key: k.key, credits: { cost: 5n } })).toMatchObject({
      code: VerifyKeyCode.VALID,
      credits: 0n,
    });
    expect(await verify({ key: k.key })).toMatchObject({
      code: VerifyKeyCode.USAGE_EXCEEDED,
      credits: 0n,
    });
  });
});

describe("keys.verifyKey after a change: the next verification sees it", () => {
  it("new limits of the key and of its identity", async () => {
    // A request naming no limit evaluates a plan kept per cached record: it must follow
    // every change of the limits, the key's and the identity's.
    const { id: identityId, externalId } = await s.seed.identity();
    const k = await s.seed.key({
      externalId,
      ratelimits: [{ name: "calls", limit: 10, duration: HOUR, autoApply: true }],
    });
    const limits = async () =>
      (await verify({ key: k.key })).ratelimits.map((r) => `${r.name}:${r.limit}`).sort();
    expect(await limits()).toEqual(["calls:10"]);
    await s.api.keys.updateKey({
      keyId: k.keyId,
      ratelimits: [{ name: "calls", limit: 2n, duration: BigInt(HOUR), autoApply: true }],
    });
    expect(await limits()).toEqual(["calls:2"]);
    await s.api.identities.updateIdentity({
      identity: identityId,
      ratelimits: [{ name: "team", limit: 7n, duration: BigInt(HOUR), autoApply: true }],
    });
    expect(await limits()).toEqual(["calls:2", "team:7"]);
    const { identity } = await verify({ key: k.key });
    expect(identity?.ratelimits).toMatchObject([{ name: "team", limit: 7n }]);
    await s.api.keys.updateKey({ keyId: k.keyId, updateMask: { paths: ["ratelimits"] } });
    expect(await limits()).toEqual(["team:7"]);
  });

  it("an expired key whose expiry is removed verifies again; a disabled key stops at once", async () => {
    const k = await s.seed.key({ expires: 1 });
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.EXPIRED);
    await s.api.keys.updateKey({ keyId: k.keyId, updateMask: { paths: ["expires"] } });
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.VALID);
    await s.api.keys.updateKey({ keyId: k.keyId, enabled: false });
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.DISABLED);
  });

  it("a key created after a miss for its secret verifies (no stale negative cache)", async () => {
    const secret = `late_${randomUUID()}`;
    expect(await verify({ key: secret })).toEqual(NOT_FOUND_ANSWER);
    const hash = createHash("sha256").update(secret).digest("hex");
    await s.api.keys.migrateKeys({
      migrationId: "late",
      apiId: await s.seed.api(),
      keys: [{ hash }],
    });
    expect((await verify({ key: secret })).code).toBe(VerifyKeyCode.VALID);
  });
});
