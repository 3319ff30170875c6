import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CreditsOperation,
  VerifyKeyCode,
  type VerifyKeyResponseData,
} from "../../../../gen/latchkey/v2/keys_pb.js";
import { currentEngine } from "../../../harness/engine.js";
import { type NodeProcess, startNodes } from "../../../harness/processes.js";
import { useServer } from "../../../harness/server.js";
import type { Api } from "../../../harness/typed.js";
import { typedApiAt, type VerifyRequest, verifyWith } from "./calls.js";

// keys.verifyKey on one process sees at once what a procedure changed through another: every
// change that alters a verification's answer invalidates the cached records of every process
// sharing the database (PostgreSQL LISTEN/NOTIFY), the absence of a key included.

/** How long a change may take to reach the other process before the test fails. */
const PROPAGATION_DEADLINE_MS = 10_000;
/** A bound on any polling loop, whatever the clock says. */
const MAX_POLLS = 100_000;

/** An answer in a failure message (int64 fields are bigints, which JSON cannot say). */
const show = (value: unknown) =>
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}n` : v));

/** Verifies through `api` until `ok` holds or the deadline passes; no sleeping, just requests. */
async function pollVerify(
  api: Api,
  req: VerifyRequest,
  ok: (data: VerifyKeyResponseData) => boolean,
): Promise<{ matched: boolean; last: VerifyKeyResponseData; latencyMs: number; polls: number }> {
  const started = performance.now();
  const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
  let last = await verifyWith(api, req);
  let polls = 1;
  while (!ok(last) && Date.now() <= deadline && polls < MAX_POLLS) {
    last = await verifyWith(api, req);
    polls++;
  }
  return { matched: ok(last), last, latencyMs: performance.now() - started, polls };
}

/** The SHA-256 of a secret in hex, as keys.migrateKeys accepts it. */
const sha256Hex = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

/** What process B should answer, as a predicate and in words (for the failure message). */
interface Expectation {
  what: string;
  ok: (data: VerifyKeyResponseData) => boolean;
}

const code = (c: VerifyKeyCode): Expectation => ({
  what: `code ${VerifyKeyCode[c]}`,
  ok: (d) => d.code === c,
});
const VALID = code(VerifyKeyCode.VALID);
const DENIED = code(VerifyKeyCode.INSUFFICIENT_PERMISSIONS);

/** One row: prepares the state, then names the change made through A and what B then answers. */
interface Scenario {
  name: string;
  prepare(): Promise<{
    /** What B verifies before the change (caching the record or its absence); null: nothing. */
    verify: VerifyRequest | null;
    before: Expectation | null;
    /** The change, made through process A as the root key. */
    change(a: Api): Promise<unknown>;
    /** What B verifies after the change (default: `verify`). */
    verifyAfter?: () => VerifyRequest;
    after: Expectation;
  }>;
}

// Several processes share one database only on PostgreSQL (LISTEN/NOTIFY invalidation).
describe.skipIf(currentEngine() !== "postgres")("keys.verifyKey across processes", () => {
  const s = useServer();
  let n = 0;
  const unique = (what: string) => `vp_${what}_${++n}`;

  // Node B caches verification records for 30 s: a change that is not invalidated stays
  // hidden far longer than the 10 s deadline of every scenario.
  let nodes: NodeProcess[] = [];
  /** Process A as the root key and without one; process B without one. */
  let nodeA: Api;
  let anonymousA: Api;
  let nodeB: Api;
  let barrierApiId = "";
  beforeAll(async () => {
    nodes = await startNodes(2, {
      databaseUrl: s.databaseUrl as string,
      rootKey: s.rootKey,
      env: { CACHE_TTL_MS: "30000" },
    });
    nodeA = typedApiAt((nodes[0] as NodeProcess).url, s.rootKey);
    anonymousA = typedApiAt((nodes[0] as NodeProcess).url, null);
    nodeB = typedApiAt((nodes[1] as NodeProcess).url, null);
    barrierApiId = await s.seed.api();
  });
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  });
  const onA = (req: VerifyRequest) => verifyWith(anonymousA, req);
  const onB = (req: VerifyRequest) => verifyWith(nodeB, req);

  /**
   * Waits until B has applied every notification of the changes committed so far, so that
   * a late notification of the preparation cannot empty B's cache after B cached the key
   * (which would let a scenario pass without the change's own invalidation). NOTIFYs are
   * delivered in commit order: once B sees a key migrated last (after caching its absence),
   * it has applied everything committed before it.
   */
  async function settle(): Promise<void> {
    const secret = `barrier_${randomUUID()}`;
    expect((await onB({ key: secret })).code).toBe(VerifyKeyCode.NOT_FOUND);
    await s.api.keys.migrateKeys({
      migrationId: "barrier",
      apiId: barrierApiId,
      keys: [{ hash: sha256Hex(secret) }],
    });
    const seen = await pollVerify(nodeB, { key: secret }, VALID.ok);
    expect(seen.matched, `barrier key not seen by B: ${show(seen.last)}`).toBe(true);
  }

  /** A key with these createKey fields, made through the in-process server. */
  const key = (body: Record<string, unknown> = {}) => s.seed.key(body);

  /** A role granting one new permission, and a key holding that role. */
  async function keyWithRole() {
    const role = unique("role");
    const permission = `${unique("perm")}.read`;
    const created = await s.api.permissions.createRole({ name: role, permissions: [permission] });
    const k = await key({ roles: [role] });
    return { ...k, role, roleId: created.data?.roleId as string, permission };
  }

  async function keyWithPermission() {
    const permission = `${unique("perm")}.read`;
    return { ...(await key({ permissions: [permission] })), permission };
  }

  async function keyWithIdentity() {
    const externalId = unique("user");
    const created = await s.api.identities.createIdentity({
      externalId,
      meta: { tier: "original" },
    });
    return { ...(await key({ externalId })), identityId: created.data?.identityId as string };
  }

  /** A change that takes the queried permission away from a key that had it. */
  function revokes<K extends { key: string; permission: string }>(
    label: string,
    make: () => Promise<K>,
    change: (a: Api, k: K) => Promise<unknown>,
  ): Scenario {
    return {
      name: `${label} → INSUFFICIENT_PERMISSIONS`,
      async prepare() {
        const k = await make();
        return {
          verify: { key: k.key, permissions: k.permission },
          before: VALID,
          change: (a) => change(a, k),
          after: DENIED,
        };
      },
    };
  }

  /** A change to a plain key: B verified VALID before it, and answers `after` once it applies. */
  function changesKey(
    name: string,
    change: (a: Api, k: { keyId: string; apiId: string }) => Promise<unknown>,
    after: Expectation,
    body: Record<string, unknown> = {},
  ): Scenario {
    return {
      name,
      async prepare() {
        const k = await key(body);
        return { verify: { key: k.key }, before: VALID, change: (a) => change(a, k), after };
      },
    };
  }

  const scenarios: Scenario[] = [
    changesKey(
      "keys.updateKey enabled:false → DISABLED",
      (a, k) => a.keys.updateKey({ keyId: k.keyId, enabled: false }),
      code(VerifyKeyCode.DISABLED),
    ),
    changesKey(
      "keys.updateKey expires in the past → EXPIRED",
      (a, k) => a.keys.updateKey({ keyId: k.keyId, expires: BigInt(Date.now() - 60_000) }),
      code(VerifyKeyCode.EXPIRED),
      { expires: 4102444800000 },
    ),
    {
      name: "keys.updateKey meta → the new meta",
      async prepare() {
        const k = await key({ meta: { environment: "original" } });
        return {
          verify: { key: k.key },
          before: {
            what: 'VALID with meta.environment "original"',
            ok: (d) => d.code === VerifyKeyCode.VALID && d.meta?.environment === "original",
          },
          change: (a) => a.keys.updateKey({ keyId: k.keyId, meta: { environment: "changed" } }),
          after: {
            what: 'meta.environment "changed"',
            ok: (d) => d.code === VerifyKeyCode.VALID && d.meta?.environment === "changed",
          },
        };
      },
    },
    changesKey(
      "keys.deleteKey → NOT_FOUND",
      (a, k) => a.keys.deleteKey({ keyId: k.keyId }),
      code(VerifyKeyCode.NOT_FOUND),
    ),
    // Credits are read from the database at spend time: this one is immediate by design.
    changesKey(
      "keys.updateCredits set 0 → USAGE_EXCEEDED",
      (a, k) =>
        a.keys.updateCredits({ keyId: k.keyId, operation: CreditsOperation.SET, value: 0n }),
      code(VerifyKeyCode.USAGE_EXCEEDED),
      { credits: { remaining: 100 } },
    ),
    changesKey(
      "keys.rerollKey expiration:0 → the old key is EXPIRED",
      (a, k) => a.keys.rerollKey({ keyId: k.keyId, expiration: 0n }),
      code(VerifyKeyCode.EXPIRED),
    ),
    revokes("keys.setPermissions []", keyWithPermission, (a, k) =>
      a.keys.setPermissions({ keyId: k.keyId, permissions: [] }),
    ),
    revokes("keys.removePermissions", keyWithPermission, (a, k) =>
      a.keys.removePermissions({ keyId: k.keyId, permissions: [k.permission] }),
    ),
    revokes("keys.setRoles []", keyWithRole, (a, k) =>
      a.keys.setRoles({ keyId: k.keyId, roles: [] }),
    ),
    revokes("permissions.deleteRole", keyWithRole, (a, k) =>
      a.permissions.deleteRole({ role: k.role }),
    ),
    revokes("permissions.deletePermission", keyWithPermission, (a, k) =>
      a.permissions.deletePermission({ permission: k.permission }),
    ),
    revokes("permissions.setRolePermissions []", keyWithRole, (a, k) =>
      a.permissions.setRolePermissions({ roleId: k.roleId, permissions: [] }),
    ),
    {
      name: "identities.updateIdentity meta → the identity's new meta",
      async prepare() {
        const k = await keyWithIdentity();
        return {
          verify: { key: k.key },
          before: {
            what: 'VALID with identity.meta.tier "original"',
            ok: (d) => d.code === VerifyKeyCode.VALID && d.identity?.meta?.tier === "original",
          },
          change: (a) =>
            a.identities.updateIdentity({ identity: k.identityId, meta: { tier: "changed" } }),
          after: {
            what: 'identity.meta.tier "changed"',
            ok: (d) => d.code === VerifyKeyCode.VALID && d.identity?.meta?.tier === "changed",
          },
        };
      },
    },
    {
      // B caches a key whose identity has no pool (it spends nothing, reads nothing): only
      // the invalidation of the identity's keys tells B that every key now spends from one.
      name: "identities.updateIdentity credits on an identity without a pool → USAGE_EXCEEDED",
      async prepare() {
        const k = await keyWithIdentity();
        return {
          verify: { key: k.key },
          before: {
            what: "VALID without identity credits",
            ok: (d) => d.code === VerifyKeyCode.VALID && d.identity?.credits === undefined,
          },
          change: (a) =>
            a.identities.updateIdentity({ identity: k.identityId, credits: { remaining: 0n } }),
          after: {
            what: "USAGE_EXCEEDED with identity credits 0",
            ok: (d) => d.code === VerifyKeyCode.USAGE_EXCEEDED && d.identity?.credits === 0n,
          },
        };
      },
    },
    {
      name: "identities.deleteIdentity → no identity in the answer",
      async prepare() {
        const k = await keyWithIdentity();
        return {
          verify: { key: k.key },
          before: {
            what: "VALID with an identity",
            ok: (d) => d.code === VerifyKeyCode.VALID && d.identity?.id === k.identityId,
          },
          change: (a) => a.identities.deleteIdentity({ identity: k.identityId }),
          after: {
            what: "VALID without identity",
            ok: (d) => d.code === VerifyKeyCode.VALID && d.identity === undefined,
          },
        };
      },
    },
    changesKey(
      "apis.deleteApi → NOT_FOUND",
      (a, k) => a.apis.deleteApi({ apiId: k.apiId }),
      code(VerifyKeyCode.NOT_FOUND),
    ),
    {
      name: "keys.addPermissions → VALID for the granted permission",
      async prepare() {
        const k = await key();
        const permission = `${unique("perm")}.read`;
        return {
          verify: { key: k.key, permissions: permission },
          before: DENIED,
          change: (a) => a.keys.addPermissions({ keyId: k.keyId, permissions: [permission] }),
          after: VALID,
        };
      },
    },
    {
      name: "keys.addRoles → VALID for the role's permission",
      async prepare() {
        const role = unique("role");
        const permission = `${unique("perm")}.read`;
        await s.api.permissions.createRole({ name: role, permissions: [permission] });
        const k = await key();
        return {
          verify: { key: k.key, permissions: permission },
          before: DENIED,
          change: (a) => a.keys.addRoles({ keyId: k.keyId, roles: [role] }),
          after: VALID,
        };
      },
    },
    revokes("keys.removeRoles", keyWithRole, (a, k) =>
      a.keys.removeRoles({ keyId: k.keyId, roles: [k.role] }),
    ),
    {
      // A request naming no limit evaluates the limits of the cached record.
      name: "keys.updateKey ratelimits → the new limit",
      async prepare() {
        const k = await key({
          ratelimits: [{ name: "calls", limit: 1_000_000, duration: 3_600_000, autoApply: true }],
        });
        const limitOf = (d: VerifyKeyResponseData) =>
          d.ratelimits.find((r) => r.name === "calls")?.limit;
        return {
          verify: { key: k.key },
          before: {
            what: "VALID with calls limited to 1000000",
            ok: (d) => d.code === VerifyKeyCode.VALID && limitOf(d) === 1_000_000n,
          },
          change: (a) =>
            a.keys.updateKey({
              keyId: k.keyId,
              ratelimits: [{ name: "calls", limit: 7n, duration: 3_600_000n, autoApply: true }],
            }),
          after: { what: "calls limited to 7", ok: (d) => limitOf(d) === 7n },
        };
      },
    },
    {
      // B caches a key without a balance (it spends nothing, reads nothing): only the
      // invalidation tells B that the key now has a balance of 0.
      name: "keys.updateKey credits on an unlimited key → USAGE_EXCEEDED",
      async prepare() {
        const k = await key();
        return {
          verify: { key: k.key },
          before: {
            what: "VALID without credits",
            ok: (d) => d.code === VerifyKeyCode.VALID && d.credits === undefined,
          },
          change: (a) => a.keys.updateKey({ keyId: k.keyId, credits: { remaining: 0n } }),
          after: {
            what: "USAGE_EXCEEDED with credits 0",
            ok: (d) => d.code === VerifyKeyCode.USAGE_EXCEEDED && d.credits === 0n,
          },
        };
      },
    },
    {
      // B caches a rerolled key, which spends its successor's balance, while the successor
      // has none: only the invalidation of the successor's dependants tells B to spend.
      name: "keys.updateCredits on a rerolled key's successor → the old key USAGE_EXCEEDED",
      async prepare() {
        const k = await key();
        const successor = await s.api.keys.rerollKey({ keyId: k.keyId, expiration: 3_600_000n });
        const successorId = successor.data?.keyId as string;
        return {
          verify: { key: k.key },
          before: {
            what: "VALID without credits",
            ok: (d) => d.code === VerifyKeyCode.VALID && d.credits === undefined,
          },
          change: (a) =>
            a.keys.updateCredits({
              keyId: successorId,
              operation: CreditsOperation.SET,
              value: 0n,
            }),
          after: {
            what: "USAGE_EXCEEDED with credits 0",
            ok: (d) => d.code === VerifyKeyCode.USAGE_EXCEEDED && d.credits === 0n,
          },
        };
      },
    },
    // An empty list changes nothing unless the update mask names the field.
    revokes("keys.updateKey roles []", keyWithRole, (a, k) =>
      a.keys.updateKey({ keyId: k.keyId, updateMask: { paths: ["roles"] } }),
    ),
    revokes("keys.updateKey permissions []", keyWithPermission, (a, k) =>
      a.keys.updateKey({ keyId: k.keyId, updateMask: { paths: ["permissions"] } }),
    ),
    {
      name: "keys.updateKey externalId → the new identity in the answer",
      async prepare() {
        const k = await key();
        const externalId = unique("user");
        return {
          verify: { key: k.key },
          before: {
            what: "VALID without identity",
            ok: (d) => d.code === VerifyKeyCode.VALID && d.identity === undefined,
          },
          change: (a) => a.keys.updateKey({ keyId: k.keyId, externalId }),
          after: {
            what: `identity.externalId "${externalId}"`,
            ok: (d) => d.code === VerifyKeyCode.VALID && d.identity?.externalId === externalId,
          },
        };
      },
    },
    {
      name: "identities.updateIdentity ratelimits → the identity's new limit",
      async prepare() {
        const k = await keyWithIdentity();
        const teamLimit = (d: VerifyKeyResponseData) =>
          d.ratelimits.find((r) => r.name === "team")?.limit;
        return {
          verify: { key: k.key },
          before: {
            what: "VALID without rate limits",
            ok: (d) => d.code === VerifyKeyCode.VALID && d.ratelimits.length === 0,
          },
          change: (a) =>
            a.identities.updateIdentity({
              identity: k.identityId,
              ratelimits: [{ name: "team", limit: 7n, duration: 3_600_000n, autoApply: true }],
            }),
          after: { what: "team limited to 7", ok: (d) => teamLimit(d) === 7n },
        };
      },
    },
    {
      // B first caches that the secret does not exist (negative cache).
      name: "keys.migrateKeys after B answered NOT_FOUND → VALID",
      async prepare() {
        const secret = `vp_migrated_${randomUUID()}`;
        const apiId = await s.seed.api();
        return {
          verify: { key: secret },
          before: code(VerifyKeyCode.NOT_FOUND),
          change: (a) =>
            a.keys.migrateKeys({
              migrationId: "verify-processes",
              apiId,
              keys: [{ hash: sha256Hex(secret), meta: { environment: "migrated" } }],
            }),
          after: VALID,
        };
      },
    },
    {
      // createKey draws the secret itself, so B cannot have cached its absence beforehand:
      // this row only shows that a key created on A verifies on B. The negative cache is
      // covered by the migrateKeys row above; both insert through insertKey, which declares
      // the same per-hash invalidation.
      name: "keys.createKey → VALID on B",
      async prepare() {
        const apiId = await s.seed.api();
        let created = "";
        return {
          verify: null,
          before: null,
          change: async (a) => {
            created = (await a.keys.createKey({ apiId })).data?.key as string;
          },
          verifyAfter: () => ({ key: created }),
          after: VALID,
        };
      },
    },
  ];

  // The control: writes made straight to the database send no notification, and B keeps
  // answering from its cache, for a record and for an absence alike. So what the rows
  // below observe on B comes from the changes' invalidations, not from a cache miss.
  it("control: B's cache hides changes that bypass the invalidation bus", async () => {
    const k = await key();
    const gone = await key();
    await s.api.keys.deleteKey({ keyId: gone.keyId });
    await settle();
    expect((await onB({ key: k.key })).code).toBe(VerifyKeyCode.VALID);
    expect((await onB({ key: gone.key })).code).toBe(VerifyKeyCode.NOT_FOUND);
    await s.db.query("update keys set enabled = false where id = $1", [k.keyId]);
    await s.db.query("update keys set deleted_at = null where id = $1", [gone.keyId]);
    // The other process has no cache entries for these hashes: it reads the database.
    expect((await onA({ key: k.key })).code).toBe(VerifyKeyCode.DISABLED);
    expect((await onA({ key: gone.key })).code).toBe(VerifyKeyCode.VALID);
    expect((await onB({ key: k.key })).code).toBe(VerifyKeyCode.VALID);
    expect((await onB({ key: gone.key })).code).toBe(VerifyKeyCode.NOT_FOUND);
  });

  // An identity's pool is spent exactly however its keys' verifications are spread over the
  // processes: each spend takes the pool's row lock in the database.
  it("an identity's pool gives exactly min(N, B) VALID through K keys on two processes", async () => {
    const externalId = unique("pool");
    await s.api.identities.createIdentity({ externalId, credits: { remaining: 25n } });
    const keys: { key: string }[] = [];
    for (let i = 0; i < 4; i++) keys.push(await key({ externalId }));
    // Both processes cache every key first, so that the burst below is all spends.
    for (const k of keys) {
      await onA({ key: k.key, credits: { cost: 0n } });
      await onB({ key: k.key, credits: { cost: 0n } });
    }
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (i % 2 === 0 ? onA : onB)({ key: keys[i % keys.length]?.key as string }),
      ),
    );
    const valid = answers.filter((a) => a.code === VerifyKeyCode.VALID);
    expect(valid).toHaveLength(25);
    expect(answers.filter((a) => a.code === VerifyKeyCode.USAGE_EXCEEDED)).toHaveLength(35);
    expect(new Set(valid.map((a) => a.identity?.credits)).size).toBe(25);
    const got = await s.api.identities.getIdentity({ externalId });
    expect(got.data?.credits?.remaining).toBe(0n);
  });

  it.each(scenarios)("$name", async ({ name, prepare }) => {
    const p = await prepare();
    await settle();
    if (p.verify && p.before) {
      // B verifies first: it caches the record (or its absence) for 30 s.
      const before = await onB(p.verify);
      expect(p.before.ok(before), `before: ${p.before.what}, got ${show(before)}`).toBe(true);
    }
    await p.change(nodeA);
    const req = p.verifyAfter ? p.verifyAfter() : (p.verify as VerifyRequest);
    const seen = await pollVerify(nodeB, req, p.after.ok);
    console.log(
      `${name}: ${seen.matched ? "seen" : "NOT seen"} by B after ${seen.latencyMs.toFixed(1)} ms (${seen.polls} verifications)`,
    );
    expect(
      seen.matched,
      `B never answered ${p.after.what} within ${PROPAGATION_DEADLINE_MS} ms; last answer ${show(seen.last)}`,
    ).toBe(true);
  });
});
