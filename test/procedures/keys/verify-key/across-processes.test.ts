import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentEngine } from "../../harness/engine.js";
import { type NodeProcess, startNodes } from "../../harness/processes.js";
import { useServer } from "../../harness/server.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
type Json = any;

/** How long a change may take to reach the other process before the test fails. */
const PROPAGATION_DEADLINE_MS = 10_000;
/** A bound on any polling loop, whatever the clock says. */
const MAX_POLLS = 100_000;

/** POST /v2/<procedure> on a process; `rootKey` undefined sends no Authorization header. */
async function post(
  url: string,
  procedure: string,
  body: unknown,
  rootKey?: string,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${url}/v2/${procedure}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(rootKey === undefined ? {} : { authorization: `Bearer ${rootKey}` }),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** keys.verifyKey on a process without a root key; returns `data`. */
async function verifyOn(node: NodeProcess, body: Record<string, unknown>): Promise<Json> {
  const res = await post(node.url, "keys.verifyKey", body);
  if (res.status !== 200)
    throw new Error(`verifyKey answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Verifies on `node` until `ok` holds or the deadline passes; no sleeping, just requests. */
async function pollVerify(
  node: NodeProcess,
  body: Record<string, unknown>,
  ok: (data: Json) => boolean,
): Promise<{ matched: boolean; last: Json; latencyMs: number; polls: number }> {
  const started = performance.now();
  const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
  let last: Json = await verifyOn(node, body);
  let polls = 1;
  while (!ok(last) && Date.now() <= deadline && polls < MAX_POLLS) {
    last = await verifyOn(node, body);
    polls++;
  }
  return { matched: ok(last), last, latencyMs: performance.now() - started, polls };
}

/** The SHA-256 of a secret in hex, as keys.migrateKeys accepts it. */
const sha256Hex = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

/** What node B should answer, as a predicate and in words (for the failure message). */
interface Expectation {
  what: string;
  ok: (data: Json) => boolean;
}

const code = (c: string): Expectation => ({ what: `code ${c}`, ok: (d) => d.code === c });
const VALID = code("VALID");

/** One row: prepares the state, then names the mutation made through A and what B then answers. */
interface Scenario {
  name: string;
  prepare(): Promise<{
    /** What B verifies before the mutation (caching the record or its absence); null: nothing. */
    verify: Record<string, unknown> | null;
    before: Expectation | null;
    procedure: string;
    body: Record<string, unknown>;
    /** What B verifies after the mutation, given the mutation's answer (default: `verify`). */
    verifyAfter?: (data: Json) => Record<string, unknown>;
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
  describe("a change made through process A is seen by process B's verifyKey", () => {
    let nodes: NodeProcess[] = [];
    let barrierApiId = "";
    beforeAll(async () => {
      nodes = await startNodes(2, {
        databaseUrl: s.databaseUrl as string,
        rootKey: s.rootKey,
        env: { CACHE_TTL_MS: "30000" },
      });
      barrierApiId = await s.seed.api();
    });
    afterAll(async () => {
      await Promise.all(nodes.map((node) => node.stop()));
    });
    const nodeA = () => nodes[0] as NodeProcess;
    const nodeB = () => nodes[1] as NodeProcess;

    /**
     * Waits until B has applied every notification of the changes committed so far, so that
     * a late notification of the preparation cannot empty B's cache after B cached the key
     * (which would let a scenario pass without the mutation's own invalidation). NOTIFYs are
     * delivered in commit order: once B sees a key migrated last (after caching its absence),
     * it has applied everything committed before it.
     */
    async function settle(): Promise<void> {
      const secret = `barrier_${randomUUID()}`;
      expect((await verifyOn(nodeB(), { key: secret })).code).toBe("NOT_FOUND");
      const migrated = await s.call("json", "keys.migrateKeys", {
        migrationId: "barrier",
        apiId: barrierApiId,
        keys: [{ hash: sha256Hex(secret) }],
      });
      expect(migrated.status).toBe(200);
      const seen = await pollVerify(nodeB(), { key: secret }, VALID.ok);
      expect(seen.matched, `barrier key not seen by B: ${JSON.stringify(seen.last)}`).toBe(true);
    }

    /** A key with these createKey fields, made through the in-process server. */
    const key = (body: Record<string, unknown> = {}) => s.seed.key(body);

    /** A role granting one new permission, and a key holding that role. */
    async function keyWithRole() {
      const role = unique("role");
      const permission = `${unique("perm")}.read`;
      const created = await s.call("json", "permissions.createRole", {
        name: role,
        permissions: [permission],
      });
      expect(created.status).toBe(200);
      const k = await key({ roles: [role] });
      return { ...k, role, roleId: created.data.roleId as string, permission };
    }

    async function keyWithPermission() {
      const permission = `${unique("perm")}.read`;
      return { ...(await key({ permissions: [permission] })), permission };
    }

    async function keyWithIdentity() {
      const externalId = unique("user");
      const created = await s.call("json", "identities.createIdentity", {
        externalId,
        meta: { tier: "original" },
      });
      expect(created.status).toBe(200);
      return { ...(await key({ externalId })), identityId: created.data.identityId as string };
    }

    const DENIED = code("INSUFFICIENT_PERMISSIONS");

    /** A change that takes the queried permission away from a key that had it. */
    function revokes<K extends { key: string; permission: string }>(
      label: string,
      make: () => Promise<K>,
      procedure: string,
      body: (k: K) => Record<string, unknown>,
    ): Scenario {
      return {
        name: `${label} → INSUFFICIENT_PERMISSIONS`,
        async prepare() {
          const k = await make();
          return {
            verify: { key: k.key, permissions: k.permission },
            before: VALID,
            procedure,
            body: body(k),
            after: DENIED,
          };
        },
      };
    }

    const scenarios: Scenario[] = [
      {
        name: "keys.updateKey enabled:false → DISABLED",
        async prepare() {
          const k = await key();
          return {
            verify: { key: k.key },
            before: VALID,
            procedure: "keys.updateKey",
            body: { keyId: k.keyId, enabled: false },
            after: code("DISABLED"),
          };
        },
      },
      {
        name: "keys.updateKey expires in the past → EXPIRED",
        async prepare() {
          const k = await key({ expires: 4102444800000 });
          return {
            verify: { key: k.key },
            before: VALID,
            procedure: "keys.updateKey",
            body: { keyId: k.keyId, expires: Date.now() - 60_000 },
            after: code("EXPIRED"),
          };
        },
      },
      {
        name: "keys.updateKey meta → the new meta",
        async prepare() {
          const k = await key({ meta: { environment: "original" } });
          return {
            verify: { key: k.key },
            before: {
              what: 'VALID with meta.environment "original"',
              ok: (d) => d.code === "VALID" && d.meta?.environment === "original",
            },
            procedure: "keys.updateKey",
            body: { keyId: k.keyId, meta: { environment: "changed" } },
            after: {
              what: 'meta.environment "changed"',
              ok: (d) => d.code === "VALID" && d.meta?.environment === "changed",
            },
          };
        },
      },
      {
        name: "keys.deleteKey → NOT_FOUND",
        async prepare() {
          const k = await key();
          return {
            verify: { key: k.key },
            before: VALID,
            procedure: "keys.deleteKey",
            body: { keyId: k.keyId },
            after: code("NOT_FOUND"),
          };
        },
      },
      {
        // Credits are read from the database at spend time: this one is immediate by design.
        name: "keys.updateCredits set 0 → USAGE_EXCEEDED",
        async prepare() {
          const k = await key({ credits: { remaining: 100 } });
          return {
            verify: { key: k.key },
            before: VALID,
            procedure: "keys.updateCredits",
            body: { keyId: k.keyId, operation: "set", value: 0 },
            after: code("USAGE_EXCEEDED"),
          };
        },
      },
      {
        name: "keys.rerollKey expiration:0 → the old key is EXPIRED",
        async prepare() {
          const k = await key();
          return {
            verify: { key: k.key },
            before: VALID,
            procedure: "keys.rerollKey",
            body: { keyId: k.keyId, expiration: 0 },
            after: code("EXPIRED"),
          };
        },
      },
      revokes("keys.setPermissions []", keyWithPermission, "keys.setPermissions", (k) => ({
        keyId: k.keyId,
        permissions: [],
      })),
      revokes("keys.removePermissions", keyWithPermission, "keys.removePermissions", (k) => ({
        keyId: k.keyId,
        permissions: [k.permission],
      })),
      revokes("keys.setRoles []", keyWithRole, "keys.setRoles", (k) => ({
        keyId: k.keyId,
        roles: [],
      })),
      revokes("permissions.deleteRole", keyWithRole, "permissions.deleteRole", (k) => ({
        role: k.role,
      })),
      revokes(
        "permissions.deletePermission",
        keyWithPermission,
        "permissions.deletePermission",
        (k) => ({ permission: k.permission }),
      ),
      revokes(
        "permissions.setRolePermissions []",
        keyWithRole,
        "permissions.setRolePermissions",
        (k) => ({ roleId: k.roleId, permissions: [] }),
      ),
      {
        name: "identities.updateIdentity meta → the identity's new meta",
        async prepare() {
          const k = await keyWithIdentity();
          return {
            verify: { key: k.key },
            before: {
              what: 'VALID with identity.meta.tier "original"',
              ok: (d) => d.code === "VALID" && d.identity?.meta?.tier === "original",
            },
            procedure: "identities.updateIdentity",
            body: { identity: k.identityId, meta: { tier: "changed" } },
            after: {
              what: 'identity.meta.tier "changed"',
              ok: (d) => d.code === "VALID" && d.identity?.meta?.tier === "changed",
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
              ok: (d) => d.code === "VALID" && d.identity?.id === k.identityId,
            },
            procedure: "identities.deleteIdentity",
            body: { identity: k.identityId },
            after: {
              what: "VALID without identity",
              ok: (d) => d.code === "VALID" && !("identity" in d),
            },
          };
        },
      },
      {
        name: "apis.deleteApi → NOT_FOUND",
        async prepare() {
          const k = await key();
          return {
            verify: { key: k.key },
            before: VALID,
            procedure: "apis.deleteApi",
            body: { apiId: k.apiId },
            after: code("NOT_FOUND"),
          };
        },
      },
      {
        name: "keys.addPermissions → VALID for the granted permission",
        async prepare() {
          const k = await key();
          const permission = `${unique("perm")}.read`;
          return {
            verify: { key: k.key, permissions: permission },
            before: DENIED,
            procedure: "keys.addPermissions",
            body: { keyId: k.keyId, permissions: [permission] },
            after: VALID,
          };
        },
      },
      {
        name: "keys.addRoles → VALID for the role's permission",
        async prepare() {
          const role = unique("role");
          const permission = `${unique("perm")}.read`;
          const created = await s.call("json", "permissions.createRole", {
            name: role,
            permissions: [permission],
          });
          expect(created.status).toBe(200);
          const k = await key();
          return {
            verify: { key: k.key, permissions: permission },
            before: DENIED,
            procedure: "keys.addRoles",
            body: { keyId: k.keyId, roles: [role] },
            after: VALID,
          };
        },
      },
      revokes("keys.removeRoles", keyWithRole, "keys.removeRoles", (k) => ({
        keyId: k.keyId,
        roles: [k.role],
      })),
      {
        // A request naming no limit evaluates the limits of the cached record.
        name: "keys.updateKey ratelimits → the new limit",
        async prepare() {
          const k = await key({
            ratelimits: [{ name: "calls", limit: 1_000_000, duration: 3_600_000, autoApply: true }],
          });
          const limitOf = (d: Json) =>
            d.ratelimits?.find((r: { name: string }) => r.name === "calls")?.limit;
          return {
            verify: { key: k.key },
            before: {
              what: "VALID with calls limited to 1000000",
              ok: (d) => d.code === "VALID" && limitOf(d) === 1_000_000,
            },
            procedure: "keys.updateKey",
            body: {
              keyId: k.keyId,
              ratelimits: [{ name: "calls", limit: 7, duration: 3_600_000, autoApply: true }],
            },
            after: { what: "calls limited to 7", ok: (d) => limitOf(d) === 7 },
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
              ok: (d) => d.code === "VALID" && !("credits" in d),
            },
            procedure: "keys.updateKey",
            body: { keyId: k.keyId, credits: { remaining: 0 } },
            after: {
              what: "USAGE_EXCEEDED with credits 0",
              ok: (d) => d.code === "USAGE_EXCEEDED" && d.credits === 0,
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
          const successor = await s.call("json", "keys.rerollKey", {
            keyId: k.keyId,
            expiration: 3_600_000,
          });
          expect(successor.status).toBe(200);
          return {
            verify: { key: k.key },
            before: {
              what: "VALID without credits",
              ok: (d) => d.code === "VALID" && !("credits" in d),
            },
            procedure: "keys.updateCredits",
            body: { keyId: successor.data.keyId, operation: "set", value: 0 },
            after: {
              what: "USAGE_EXCEEDED with credits 0",
              ok: (d) => d.code === "USAGE_EXCEEDED" && d.credits === 0,
            },
          };
        },
      },
      revokes("keys.updateKey roles []", keyWithRole, "keys.updateKey", (k) => ({
        keyId: k.keyId,
        roles: [],
      })),
      revokes("keys.updateKey permissions []", keyWithPermission, "keys.updateKey", (k) => ({
        keyId: k.keyId,
        permissions: [],
      })),
      {
        name: "keys.updateKey externalId → the new identity in the answer",
        async prepare() {
          const k = await key();
          const externalId = unique("user");
          return {
            verify: { key: k.key },
            before: {
              what: "VALID without identity",
              ok: (d) => d.code === "VALID" && !("identity" in d),
            },
            procedure: "keys.updateKey",
            body: { keyId: k.keyId, externalId },
            after: {
              what: `identity.externalId "${externalId}"`,
              ok: (d) => d.code === "VALID" && d.identity?.externalId === externalId,
            },
          };
        },
      },
      {
        name: "identities.updateIdentity ratelimits → the identity's new limit",
        async prepare() {
          const k = await keyWithIdentity();
          const teamLimit = (d: Json) =>
            d.ratelimits?.find((r: { name: string }) => r.name === "team")?.limit;
          return {
            verify: { key: k.key },
            before: {
              what: "VALID without rate limits",
              ok: (d) => d.code === "VALID" && !("ratelimits" in d),
            },
            procedure: "identities.updateIdentity",
            body: {
              identity: k.identityId,
              ratelimits: [{ name: "team", limit: 7, duration: 3_600_000, autoApply: true }],
            },
            after: { what: "team limited to 7", ok: (d) => teamLimit(d) === 7 },
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
            before: code("NOT_FOUND"),
            procedure: "keys.migrateKeys",
            body: {
              migrationId: "verify-processes",
              apiId,
              keys: [{ hash: sha256Hex(secret), meta: { environment: "migrated" } }],
            },
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
          return {
            verify: null,
            before: null,
            procedure: "keys.createKey",
            body: { apiId },
            verifyAfter: (data) => ({ key: data.key }),
            after: VALID,
          };
        },
      },
    ];

    // The control: writes made straight to the database send no notification, and B keeps
    // answering from its cache, for a record and for an absence alike. So what the rows
    // below observe on B comes from the mutations' invalidations, not from a cache miss.
    it("control: B's cache hides changes that bypass the invalidation bus", async () => {
      const k = await key();
      const gone = await key();
      expect((await s.call("json", "keys.deleteKey", { keyId: gone.keyId })).status).toBe(200);
      await settle();
      expect((await verifyOn(nodeB(), { key: k.key })).code).toBe("VALID");
      expect((await verifyOn(nodeB(), { key: gone.key })).code).toBe("NOT_FOUND");
      await s.db.query("update keys set enabled = false where id = $1", [k.keyId]);
      await s.db.query("update keys set deleted_at = null where id = $1", [gone.keyId]);
      // The other process has no cache entries for these hashes: it reads the database.
      expect((await verifyOn(nodeA(), { key: k.key })).code).toBe("DISABLED");
      expect((await verifyOn(nodeA(), { key: gone.key })).code).toBe("VALID");
      expect((await verifyOn(nodeB(), { key: k.key })).code).toBe("VALID");
      expect((await verifyOn(nodeB(), { key: gone.key })).code).toBe("NOT_FOUND");
    });

    it.each(scenarios)("$name", async ({ name, prepare }) => {
      const p = await prepare();
      await settle();
      if (p.verify && p.before) {
        // B verifies first: it caches the record (or its absence) for 30 s.
        const before = await verifyOn(nodeB(), p.verify);
        expect(p.before.ok(before), `before: ${p.before.what}, got ${JSON.stringify(before)}`).toBe(
          true,
        );
      }
      const mutation = await post(nodeA().url, p.procedure, p.body, s.rootKey);
      expect(mutation.status, JSON.stringify(mutation.body)).toBe(200);
      const verify = p.verifyAfter ? p.verifyAfter(mutation.body.data) : p.verify;
      const seen = await pollVerify(nodeB(), verify as Record<string, unknown>, p.after.ok);
      console.log(
        `${name}: ${seen.matched ? "seen" : "NOT seen"} by B after ${seen.latencyMs.toFixed(1)} ms (${seen.polls} verifications)`,
      );
      expect(
        seen.matched,
        `B never answered ${p.after.what} within ${PROPAGATION_DEADLINE_MS} ms; last answer ${JSON.stringify(seen.last)}`,
      ).toBe(true);
    });
  });

  describe("kill -9 during a credit burst", () => {
    const CREDITS = 2000;
    const WORKERS = 64;
    const KILL_AFTER_VALID = 300;
    /** Requests per worker at most: the burst ends even if the kill never happens. */
    const MAX_PER_WORKER = 100;
    let node: NodeProcess | undefined;
    beforeAll(async () => {
      [node] = await startNodes(1, { databaseUrl: s.databaseUrl as string, rootKey: s.rootKey });
    });
    afterAll(async () => {
      await node?.stop("SIGKILL");
    });

    it("leaves no acknowledged VALID unspent and spends at most what was in flight", async () => {
      const target = node as NodeProcess;
      const k = await s.seed.key({ credits: { remaining: CREDITS } });
      let validReceived = 0;
      let otherAnswers = 0;
      let failed = 0;
      let inFlight = 0;
      let inFlightAtKill = -1;
      let killed = false;

      const worker = async () => {
        for (let i = 0; i < MAX_PER_WORKER && !killed; i++) {
          inFlight++;
          try {
            const res = await fetch(`${target.url}/v2/keys.verifyKey`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ key: k.key, credits: { cost: 1 } }),
              signal: AbortSignal.timeout(10_000),
            });
            const body = (await res.json()) as Json;
            if (res.status === 200 && body.data?.code === "VALID") validReceived++;
            else otherAnswers++;
          } catch {
            // Connection reset by the kill: expected.
            failed++;
          } finally {
            inFlight--;
          }
          if (!killed && validReceived >= KILL_AFTER_VALID) {
            killed = true;
            inFlightAtKill = inFlight;
            target.child.kill("SIGKILL");
          }
        }
      };
      await Promise.all(Array.from({ length: WORKERS }, worker));
      expect(killed).toBe(true);
      expect(await target.stop()).toBeNull();

      // Let the database finish statements the dead process had sent (they commit or roll
      // back on their own), so the balance read below is final.
      const deadline = Date.now() + 10_000;
      for (let i = 0; i < MAX_POLLS && Date.now() <= deadline; i++) {
        const busy = await s.db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where datname = current_database() and pid <> pg_backend_pid()
             and backend_type = 'client backend' and state <> 'idle'`,
        );
        if (busy[0]?.n === 0) break;
      }
      const rows = await s.db.query<{ remaining: number }>(
        "select remaining from keys where id = $1",
        [k.keyId],
      );
      const remaining = Number(rows[0]?.remaining);
      const spent = CREDITS - remaining;
      console.log(
        `kill -9 burst: ${validReceived} VALID received, ${otherAnswers} other answers, ` +
          `${failed} failed requests, ${inFlightAtKill} in flight at the kill; ` +
          `remaining ${remaining}, spent ${spent}, spent without acknowledgement ${spent - validReceived}`,
      );
      expect(validReceived).toBeGreaterThanOrEqual(KILL_AFTER_VALID);
      expect(otherAnswers).toBe(0);
      // Every acknowledged VALID was committed…
      expect(remaining + validReceived).toBeLessThanOrEqual(CREDITS);
      // …and nothing was spent beyond the requests that were still in flight.
      expect(CREDITS - (remaining + validReceived)).toBeLessThanOrEqual(inFlightAtKill);
    });
  });
});
