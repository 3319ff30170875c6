import { beforeAll, describe, expect, it } from "vitest";
import { randomString } from "../../src/domain/random.js";
import { namespaceOf, type Procedure, procedures } from "../../src/services/procedures.js";
import { type CallResult, DOORS, SERVICES } from "../harness/doors.js";
import { useServer } from "../harness/server.js";
import { diffSnapshots, type Snapshot } from "../harness/snapshot.js";

const s = useServer();

type Body = Record<string, unknown>;

/** One of everything in a workspace, made through that workspace's root key. */
interface World {
  workspaceId: string;
  rootKey: string;
  apiId: string;
  apiName: string;
  keyId: string;
  key: string;
  keyName: string;
  metaSecret: string;
  identityId: string;
  externalId: string;
  roleId: string;
  role: string;
  permissionId: string;
  slug: string;
  namespaceId: string;
  namespace: string;
  identifier: string;
  overrideId: string;
  /** A reservation of the key's credits, made by verifyKey with credits.reserve. */
  reservationId: string;
  /** A webhook endpoint, and the delivery of the key's creation to it. */
  endpointId: string;
  deliveryId: string;
}

async function ok(rootKey: string, procedure: string, body: Body): Promise<CallResult> {
  const res = await s.call("json", procedure, body, rootKey);
  if (res.status !== 200) throw new Error(`${procedure}: ${JSON.stringify(res.error)}`);
  return res;
}

async function world(workspaceId: string, rootKey: string, tag: string): Promise<World> {
  const r = randomString(8).toLowerCase();
  const w = {
    workspaceId,
    rootKey,
    apiName: `${tag}-api-${r}`,
    keyName: `${tag}-key-name-${r}`,
    metaSecret: `${tag}-meta-secret-${r}`,
    externalId: `${tag}_user_${r}`,
    role: `${tag}_role_${r}`,
    slug: `${tag}.perm.${r}`,
    namespace: `${tag}.ns.${r}`,
    identifier: `${tag}-vip-${r}`,
  };
  const apiId = (await ok(rootKey, "apis.createApi", { name: w.apiName })).data.apiId;
  const endpointId = (
    await ok(rootKey, "webhooks.createEndpoint", {
      url: "https://hooks.example.com/latchkey",
      eventTypes: ["key.created"],
    })
  ).data.endpoint.id;
  const permissionId = (
    await ok(rootKey, "permissions.createPermission", { name: w.slug, slug: w.slug })
  ).data.permissionId;
  const roleId = (
    await ok(rootKey, "permissions.createRole", { name: w.role, permissions: [w.slug] })
  ).data.roleId;
  const identityId = (
    await ok(rootKey, "identities.createIdentity", {
      externalId: w.externalId,
      meta: { secret: w.metaSecret },
      ratelimits: [{ name: "requests", limit: 100, duration: 60_000 }],
    })
  ).data.identityId;
  const key = await ok(rootKey, "keys.createKey", {
    apiId,
    prefix: tag,
    name: w.keyName,
    externalId: w.externalId,
    meta: { secret: w.metaSecret },
    roles: [w.role],
    permissions: [w.slug],
    credits: { remaining: 1000 },
  });
  await ok(rootKey, "ratelimit.limit", {
    namespace: w.namespace,
    identifier: "seed",
    limit: 1,
    duration: 1000,
  });
  const override = await ok(rootKey, "ratelimit.setOverride", {
    namespace: w.namespace,
    identifier: w.identifier,
    limit: 5,
    duration: 60_000,
  });
  const ns = await s.db.query<{ id: string }>(
    "select id from ratelimit_namespaces where workspace_id = $1 and name = $2",
    [workspaceId, w.namespace],
  );
  const reservation = await ok(rootKey, "keys.verifyKey", {
    key: key.data.key,
    credits: { reserve: 1 },
  });
  const delivery = await s.db.query<{ id: string }>(
    "select id from webhook_deliveries where endpoint_id = $1",
    [endpointId],
  );
  return {
    ...w,
    endpointId,
    deliveryId: delivery[0]?.id as string,
    reservationId: reservation.data.reservationId,
    apiId,
    keyId: key.data.keyId,
    key: key.data.key,
    identityId,
    roleId,
    permissionId,
    namespaceId: ns[0]?.id as string,
    overrideId: override.data.overrideId,
  };
}

/** What a foreign-workspace call must answer. */
type Outcome =
  /** 404 with a `data:*_not_found` code, changing nothing. */
  | "not found"
  /** 200 with an empty list: the filter matches nothing of this workspace. */
  | "empty"
  /** A check of its own (outcomes that are answers, or namespaces created on first use). */
  | ((res: CallResult, f: World) => void);

interface Row {
  /** A body that succeeds in the default workspace with `*.*.*`. */
  own: (d: World) => Body;
  /** Bodies naming another workspace's objects (create and list procedures may have none). */
  foreign?: [label: string, body: (f: World, d: World) => Body, outcome: Outcome][];
}

const notFound = "not found" as const;

/** Every procedure but liveness.check: a body of its own, and ways to point it elsewhere. */
const TABLE: Record<string, Row> = {
  "apis.createApi": { own: () => ({ name: "matrix api" }) },
  "apis.getApi": {
    own: (d) => ({ apiId: d.apiId }),
    foreign: [["its API", (f) => ({ apiId: f.apiId }), notFound]],
  },
  "apis.updateApi": {
    own: (d) => ({ apiId: d.apiId, name: "matrix renamed" }),
    foreign: [["its API", (f) => ({ apiId: f.apiId, allowedCidrs: null }), notFound]],
  },
  "apis.deleteApi": {
    own: (d) => ({ apiId: d.apiId }),
    foreign: [["its API", (f) => ({ apiId: f.apiId }), notFound]],
  },
  "apis.listApis": { own: () => ({}) },
  "apis.listKeys": {
    own: (d) => ({ apiId: d.apiId }),
    foreign: [["its API", (f) => ({ apiId: f.apiId }), notFound]],
  },
  "keys.createKey": {
    own: (d) => ({ apiId: d.apiId }),
    foreign: [
      ["its API", (f) => ({ apiId: f.apiId }), notFound],
      ["its role, on our API", (f, d) => ({ apiId: d.apiId, roles: [f.role] }), notFound],
    ],
  },
  "keys.verifyKey": {
    own: (d) => ({ key: d.key }),
    foreign: [
      [
        "its key's secret",
        (f) => ({ key: f.key }),
        (res) => {
          // An outcome, not an error: the key is simply not there for this root key.
          expect(res.status).toBe(200);
          expect(res.data).toMatchObject({ valid: false, code: "NOT_FOUND" });
          expect(res.data.keyId).toBeUndefined();
        },
      ],
    ],
  },
  "keys.getKey": {
    own: (d) => ({ keyId: d.keyId }),
    foreign: [["its key", (f) => ({ keyId: f.keyId }), notFound]],
  },
  "keys.whoami": {
    own: (d) => ({ key: d.key }),
    foreign: [["its key's secret", (f) => ({ key: f.key }), notFound]],
  },
  "keys.updateKey": {
    own: (d) => ({ keyId: d.keyId, name: "renamed" }),
    foreign: [
      ["its key", (f) => ({ keyId: f.keyId, name: "renamed" }), notFound],
      ["its role, on our key", (f, d) => ({ keyId: d.keyId, roles: [f.role] }), notFound],
    ],
  },
  "keys.updateCredits": {
    own: (d) => ({ keyId: d.keyId, operation: "set", value: 5 }),
    foreign: [["its key", (f) => ({ keyId: f.keyId, operation: "set", value: 5 }), notFound]],
  },
  "keys.settleCredits": {
    own: (d) => ({ reservationId: d.reservationId, used: 0 }),
    foreign: [["its reservation", (f) => ({ reservationId: f.reservationId, used: 0 }), notFound]],
  },
  "keys.deleteKey": {
    own: (d) => ({ keyId: d.keyId }),
    foreign: [["its key", (f) => ({ keyId: f.keyId, permanent: true }), notFound]],
  },
  "keys.rerollKey": {
    own: (d) => ({ keyId: d.keyId, expiration: 0 }),
    foreign: [["its key", (f) => ({ keyId: f.keyId, expiration: 0 }), notFound]],
  },
  "keys.migrateKeys": {
    own: (d) => ({ migrationId: "matrix", apiId: d.apiId, keys: [{ hash: "a".repeat(64) }] }),
    foreign: [
      [
        "its API",
        (f) => ({ migrationId: "matrix", apiId: f.apiId, keys: [{ hash: "b".repeat(64) }] }),
        notFound,
      ],
      [
        "its role, on our API",
        (f, d) => ({
          migrationId: "matrix",
          apiId: d.apiId,
          keys: [{ hash: "c".repeat(64), roles: [f.role] }],
        }),
        notFound,
      ],
    ],
  },
  "keys.addPermissions": {
    own: (d) => ({ keyId: d.keyId, permissions: [d.slug] }),
    foreign: [["its key", (f, d) => ({ keyId: f.keyId, permissions: [d.slug] }), notFound]],
  },
  "keys.removePermissions": {
    own: (d) => ({ keyId: d.keyId, permissions: [d.slug] }),
    foreign: [
      ["its key", (f) => ({ keyId: f.keyId, permissions: [f.slug] }), notFound],
      [
        "its permission, on our key",
        (f, d) => ({ keyId: d.keyId, permissions: [f.slug] }),
        notFound,
      ],
    ],
  },
  "keys.setPermissions": {
    own: (d) => ({ keyId: d.keyId, permissions: [d.slug] }),
    foreign: [["its key", (f, d) => ({ keyId: f.keyId, permissions: [d.slug] }), notFound]],
  },
  "keys.addRoles": {
    own: (d) => ({ keyId: d.keyId, roles: [d.role] }),
    foreign: [
      ["its key", (f, d) => ({ keyId: f.keyId, roles: [d.role] }), notFound],
      ["its role, on our key", (f, d) => ({ keyId: d.keyId, roles: [f.role] }), notFound],
    ],
  },
  "keys.removeRoles": {
    own: (d) => ({ keyId: d.keyId, roles: [d.role] }),
    foreign: [
      ["its key", (f) => ({ keyId: f.keyId, roles: [f.role] }), notFound],
      ["its role, on our key", (f, d) => ({ keyId: d.keyId, roles: [f.role] }), notFound],
    ],
  },
  "keys.setRoles": {
    own: (d) => ({ keyId: d.keyId, roles: [d.role] }),
    foreign: [
      ["its key", (f, d) => ({ keyId: f.keyId, roles: [d.role] }), notFound],
      ["its role, on our key", (f, d) => ({ keyId: d.keyId, roles: [f.role] }), notFound],
    ],
  },
  "identities.createIdentity": { own: () => ({ externalId: `matrix_${randomString(8)}` }) },
  "identities.getIdentity": {
    own: (d) => ({ identity: d.identityId }),
    foreign: [
      ["its identity by id", (f) => ({ identity: f.identityId }), notFound],
      ["its identity by externalId", (f) => ({ identity: f.externalId }), notFound],
    ],
  },
  "identities.listIdentities": {
    own: () => ({}),
    foreign: [["a search for its identity", (f) => ({ search: f.externalId }), "empty"]],
  },
  "identities.updateIdentity": {
    own: (d) => ({ identity: d.identityId, meta: {} }),
    foreign: [["its identity", (f) => ({ identity: f.identityId, meta: {} }), notFound]],
  },
  "identities.deleteIdentity": {
    own: (d) => ({ identity: d.identityId }),
    foreign: [["its identity", (f) => ({ identity: f.externalId }), notFound]],
  },
  "permissions.createPermission": { own: () => ({ name: "matrix.perm", slug: "matrix.perm" }) },
  "permissions.getPermission": {
    own: (d) => ({ permission: d.permissionId }),
    foreign: [
      ["its permission by id", (f) => ({ permission: f.permissionId }), notFound],
      ["its permission by slug", (f) => ({ permission: f.slug }), notFound],
    ],
  },
  "permissions.listPermissions": {
    own: () => ({}),
    foreign: [["a search for its permission", (f) => ({ search: f.slug }), "empty"]],
  },
  "permissions.deletePermission": {
    own: (d) => ({ permission: d.permissionId }),
    foreign: [["its permission", (f) => ({ permission: f.permissionId }), notFound]],
  },
  "permissions.createRole": { own: () => ({ name: "matrix_role" }) },
  "permissions.getRole": {
    own: (d) => ({ role: d.roleId }),
    foreign: [
      ["its role by id", (f) => ({ role: f.roleId }), notFound],
      ["its role by name", (f) => ({ role: f.role }), notFound],
    ],
  },
  "permissions.listRoles": {
    own: () => ({}),
    foreign: [["a search for its role", (f) => ({ search: f.role }), "empty"]],
  },
  "permissions.deleteRole": {
    own: (d) => ({ role: d.roleId }),
    foreign: [["its role", (f) => ({ role: f.roleId }), notFound]],
  },
  "permissions.setRolePermissions": {
    own: (d) => ({ roleId: d.roleId, permissions: [d.slug] }),
    foreign: [["its role", (f, d) => ({ roleId: f.roleId, permissions: [d.slug] }), notFound]],
  },
  "ratelimit.limit": {
    own: (d) => ({ namespace: d.namespace, identifier: "u", limit: 10, duration: 60_000 }),
    foreign: [
      [
        "its namespace's name and overridden identifier",
        (f) => ({ namespace: f.namespace, identifier: f.identifier, limit: 10, duration: 60_000 }),
        (res) => {
          // Names are per workspace: this makes a namespace of our own (so the override rows
          // below name theirs by id); their override stays out.
          expect(res.status).toBe(200);
          expect(res.data).toMatchObject({ success: true, limit: 10 });
          expect(res.data.overrideId).toBeUndefined();
        },
      ],
    ],
  },
  "ratelimit.multiLimit": {
    own: (d) => ({
      limits: [{ namespace: d.namespace, identifier: "u", limit: 10, duration: 60_000 }],
    }),
    foreign: [
      [
        "its namespace's name and overridden identifier",
        (f) => ({
          limits: [
            { namespace: f.namespace, identifier: f.identifier, limit: 10, duration: 60_000 },
          ],
        }),
        (res) => {
          expect(res.status).toBe(200);
          expect(res.data.limits).toEqual([expect.objectContaining({ passed: true, limit: 10 })]);
          expect(res.data.limits[0].overrideId).toBeUndefined();
        },
      ],
    ],
  },
  "ratelimit.setOverride": {
    own: (d) => ({ namespace: d.namespace, identifier: "x*", limit: 1, duration: 1000 }),
    foreign: [
      [
        "its namespace",
        (f) => ({ namespace: f.namespaceId, identifier: "x*", limit: 1, duration: 1000 }),
        notFound,
      ],
    ],
  },
  "ratelimit.getOverride": {
    own: (d) => ({ namespace: d.namespace, identifier: d.identifier }),
    foreign: [
      [
        "its namespace by id",
        (f) => ({ namespace: f.namespaceId, identifier: f.identifier }),
        notFound,
      ],
      [
        "its namespace by name",
        (f) => ({ namespace: f.namespace, identifier: f.identifier }),
        notFound,
      ],
    ],
  },
  "ratelimit.listOverrides": {
    own: (d) => ({ namespace: d.namespace }),
    foreign: [["its namespace", (f) => ({ namespace: f.namespaceId }), notFound]],
  },
  "ratelimit.deleteOverride": {
    own: (d) => ({ namespace: d.namespace, identifier: d.identifier }),
    foreign: [
      ["its namespace", (f) => ({ namespace: f.namespaceId, identifier: f.identifier }), notFound],
    ],
  },
  "analytics.getVerifications": {
    own: () => ({ query: "select sum(count)::int as n from key_verifications_per_day_v1" }),
    foreign: [
      [
        "a query for its key",
        (f) => ({
          query: `select key_id, count(*)::int as n from key_verifications_per_day_v1 where key_id = '${f.keyId}' group by key_id`,
        }),
        "empty",
      ],
    ],
  },
  "analytics.getCreditUsage": {
    own: (d) => ({ keyId: d.keyId, start: 0, end: 86_400_000, granularity: "day" }),
    foreign: [
      [
        "its key",
        (f) => ({ keyId: f.keyId, start: 0, end: 86_400_000, granularity: "day" }),
        notFound,
      ],
      [
        "its identity",
        (f) => ({ identityId: f.identityId, start: 0, end: 86_400_000, granularity: "day" }),
        notFound,
      ],
    ],
  },
  "analytics.listAuditLogs": {
    own: () => ({}),
    foreign: [["a filter on its API", (f) => ({ resourceId: f.apiId }), "empty"]],
  },
  "webhooks.createEndpoint": {
    own: () => ({ url: "https://hooks.example.com/matrix", eventTypes: ["key.deleted"] }),
  },
  "webhooks.listEndpoints": { own: () => ({}) },
  "webhooks.updateEndpoint": {
    own: (d) => ({ endpointId: d.endpointId, description: "matrix" }),
    foreign: [["its endpoint", (f) => ({ endpointId: f.endpointId, description: "x" }), notFound]],
  },
  "webhooks.deleteEndpoint": {
    own: (d) => ({ endpointId: d.endpointId }),
    foreign: [["its endpoint", (f) => ({ endpointId: f.endpointId }), notFound]],
  },
  "webhooks.rotateSecret": {
    own: (d) => ({ endpointId: d.endpointId }),
    foreign: [["its endpoint", (f) => ({ endpointId: f.endpointId }), notFound]],
  },
  "webhooks.listDeliveries": {
    own: (d) => ({ endpointId: d.endpointId }),
    foreign: [["its endpoint", (f) => ({ endpointId: f.endpointId }), notFound]],
  },
  "webhooks.redeliver": {
    own: (d) => ({ endpointId: d.endpointId, deliveryId: d.deliveryId }),
    foreign: [
      ["its endpoint", (f) => ({ endpointId: f.endpointId, deliveryId: f.deliveryId }), notFound],
      [
        "its delivery, on our endpoint",
        (f, d) => ({ endpointId: d.endpointId, deliveryId: f.deliveryId }),
        notFound,
      ],
    ],
  },
};

/** Every procedure the server serves but liveness.check, derived from the contract. */
const PROCEDURES = SERVICES.flatMap((service) =>
  service.methods.map((m) => `${namespaceOf(service)}.${m.localName}`),
).filter((p) => p !== "liveness.check");

function rowOf(procedure: string): Row {
  const row = TABLE[procedure];
  if (!row) throw new Error(`${procedure} has no row in the security matrix: add one`);
  return row;
}

/** A permission the procedure neither needs nor may need. */
function unrelatedPermission(procedure: string): string {
  const p = (procedures as Record<string, Procedure>)[procedure];
  const needed = [p?.permission ?? [], Object.values(p?.when ?? {})].flat().join(" ");
  const found = ["rbac.*.read_role", "identity.*.read_identity"].find((c) => !needed.includes(c));
  return found as string;
}

async function settled(): Promise<Snapshot> {
  await s.app.deps.events.flush();
  return s.snapshot();
}

let own: World;
let foreign: World;

beforeAll(async () => {
  // Deliveries are not this file's subject: no attempt may change rows behind its snapshots.
  await s.app.webhooks.stop();
  own = await world(s.workspaceId, s.rootKey, "own");
  const ws = await s.seed.workspace();
  foreign = await world(ws, await s.seed.rootKey(["*.*.*"], ws), "foreign");
  // Analytics of its own, for the queries to find (or not).
  for (let i = 0; i < 3; i++) await ok(foreign.rootKey, "keys.verifyKey", { key: foreign.key });
  await s.app.deps.events.flush();
});

it("has a row for every procedure", () => {
  expect(Object.keys(TABLE).sort()).toEqual([...PROCEDURES].sort());
});

// The order of checks: authenticate (401), validate the body (400), load the target in the
// caller's workspace (404), then check the permission (403). A root key that lacks the
// permission for an object of its own workspace is told so: the 403 is never masked as 404.
describe.each(DOORS)("a root key without the permission, via %s", (door) => {
  it.each(PROCEDURES)(
    "%s: exactly 403 on its own objects, and nothing written",
    async (procedure) => {
      const weak = await s.seed.rootKey([unrelatedPermission(procedure)]);
      const before = await settled();
      const res = await s.call(door, procedure, rowOf(procedure).own(own), weak);
      expect(res.status).toBe(403);
      expect(res.error?.code).toBe("err:svc:authorization:insufficient_permissions");
      expect(diffSnapshots(before, await settled())).toEqual({});
    },
  );
});

const FOREIGN = PROCEDURES.flatMap((procedure) =>
  (rowOf(procedure).foreign ?? []).map(([label, body, outcome]) => ({
    procedure,
    label,
    body,
    outcome,
  })),
);

/** Everything about the other workspace a response must not show. */
function foreignSecrets(f: World): string[] {
  return [
    f.workspaceId,
    f.rootKey,
    f.apiId,
    f.apiName,
    f.keyId,
    f.key,
    f.keyName,
    f.metaSecret,
    f.identityId,
    f.externalId,
    f.roleId,
    f.role,
    f.permissionId,
    f.slug,
    f.namespaceId,
    f.namespace,
    f.identifier,
    f.overrideId,
  ];
}

describe.each(DOORS)("another workspace's objects, via %s", (door) => {
  it.each(FOREIGN)(
    "$procedure naming $label does not reveal it",
    async ({ procedure, body, outcome }) => {
      const request = body(foreign, own);
      const before = await settled();
      const res = await s.call(door, procedure, request);
      if (outcome === "not found") {
        expect(res.status).toBe(404);
        expect(res.error?.code).toMatch(/^err:svc:data:[a-z_]+_not_found$/);
        expect(diffSnapshots(before, await settled())).toEqual({});
      } else if (outcome === "empty") {
        expect(res.status).toBe(200);
        expect(res.data).toEqual([]);
      } else outcome(res, foreign);
      // What we sent may come back (a 404 names the missing role); nothing else of theirs may.
      const sent = JSON.stringify(request);
      const answer = JSON.stringify(res);
      for (const secret of foreignSecrets(foreign)) {
        if (!sent.includes(secret)) expect(answer).not.toContain(secret);
      }
    },
  );
});

/** Rows that name another workspace's object on a target of our own ("its role, on our key"). */
const onOurTarget = (label: string) => label.includes(", on our ");

// The target is loaded in the caller's workspace before the permission is checked: a root key
// without the permission cannot tell another workspace's object from a missing one either.
// When the target is ours and only a referenced object is theirs, the missing permission is
// the answer (403), before the reference is looked at.
describe("another workspace's objects, via a root key without the permission", () => {
  it.each(FOREIGN.filter((c) => c.outcome === notFound))(
    "$procedure naming $label: 404 for their target, 403 for ours",
    async ({ procedure, label, body }) => {
      const weak = await s.seed.rootKey([unrelatedPermission(procedure)]);
      const res = await s.call("json", procedure, body(foreign, own), weak);
      if (onOurTarget(label)) {
        expect(res.status).toBe(403);
        expect(res.error?.code).toBe("err:svc:authorization:insufficient_permissions");
      } else {
        expect(res.status).toBe(404);
        expect(res.error?.code).toMatch(/^err:svc:data:[a-z_]+_not_found$/);
      }
    },
  );
});
