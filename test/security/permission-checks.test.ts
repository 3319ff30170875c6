import { beforeAll, describe, expect, it } from "vitest";
import { randomString } from "../../src/domain/random.js";
import { namespaceOf } from "../../src/services/procedures.js";
import { SERVICES } from "../harness/doors.js";
import { useServer } from "../harness/server.js";

// Every permission a procedure needs is checked on its own: a root key holding all the
// others but that one is refused with 403 naming it. The expectations are written out here,
// not read from the procedures table, so a permission dropped from the table (or a check
// dropped from a procedure) fails a test.

const s = useServer();

type Body = Record<string, unknown>;

/** The objects of the default workspace the bodies name. */
interface World {
  apiId: string;
  keyId: string;
  key: string;
  identityId: string;
  slug: string;
  roleId: string;
  namespace: string;
  namespaceId: string;
  identifier: string;
  reservationId: string;
  endpointId: string;
  deliveryId: string;
}

interface Row {
  /** Every permission the procedure needs, `{apiId}` style placeholders for ids. */
  needs: string[];
  body: (w: World) => Body;
  /** Permissions needed only when the body does something in particular. */
  cases?: { label: string; needs: string; body: (w: World) => Body; granted?: string[] }[];
}

const fresh = () => `pc.new.${randomString(8).toLowerCase()}`;
const key = "api.{apiId}.update_key";

const TABLE: Record<string, Row> = {
  "apis.createApi": { needs: ["api.*.create_api"], body: () => ({ name: "pc api" }) },
  "apis.getApi": { needs: ["api.{apiId}.read_api"], body: (w) => ({ apiId: w.apiId }) },
  "apis.updateApi": {
    needs: ["api.{apiId}.update_api"],
    body: (w) => ({ apiId: w.apiId, name: "pc renamed" }),
  },
  "apis.deleteApi": { needs: ["api.{apiId}.delete_api"], body: (w) => ({ apiId: w.apiId }) },
  "apis.listApis": { needs: ["api.*.read_api"], body: () => ({}) },
  "apis.listKeys": {
    needs: ["api.{apiId}.read_key", "api.{apiId}.read_api"],
    body: (w) => ({ apiId: w.apiId }),
  },
  "keys.createKey": { needs: ["api.{apiId}.create_key"], body: (w) => ({ apiId: w.apiId }) },
  "keys.getKey": { needs: ["api.{apiId}.read_key"], body: (w) => ({ keyId: w.keyId }) },
  "keys.whoami": { needs: ["api.{apiId}.read_key"], body: (w) => ({ key: w.key }) },
  "keys.updateKey": { needs: [key], body: (w) => ({ keyId: w.keyId, name: "pc" }) },
  "keys.updateCredits": {
    needs: [key],
    body: (w) => ({ keyId: w.keyId, operation: "set", value: 5 }),
  },
  "keys.settleCredits": {
    needs: ["api.{apiId}.verify_key"],
    body: (w) => ({ reservationId: w.reservationId, used: 0 }),
  },
  "keys.deleteKey": { needs: ["api.{apiId}.delete_key"], body: (w) => ({ keyId: w.keyId }) },
  "keys.rerollKey": {
    needs: ["api.{apiId}.create_key"],
    body: (w) => ({ keyId: w.keyId, expiration: 0 }),
  },
  "keys.migrateKeys": {
    needs: ["api.{apiId}.create_key"],
    body: (w) => ({
      migrationId: "pc-migration",
      apiId: w.apiId,
      keys: [{ hash: "d".repeat(64) }],
    }),
  },
  "keys.addPermissions": {
    needs: [key, "rbac.*.add_permission_to_key"],
    body: (w) => ({ keyId: w.keyId, permissions: [w.slug] }),
    cases: [
      {
        label: "a permission that does not exist yet",
        needs: "rbac.*.create_permission",
        body: (w) => ({ keyId: w.keyId, permissions: [fresh()] }),
      },
    ],
  },
  "keys.removePermissions": {
    needs: [key, "rbac.*.remove_permission_from_key"],
    body: (w) => ({ keyId: w.keyId, permissions: [w.slug] }),
  },
  "keys.setPermissions": {
    needs: [key, "rbac.*.add_permission_to_key", "rbac.*.remove_permission_from_key"],
    body: (w) => ({ keyId: w.keyId, permissions: [w.slug] }),
    cases: [
      {
        label: "a permission that does not exist yet",
        needs: "rbac.*.create_permission",
        body: (w) => ({ keyId: w.keyId, permissions: [fresh()] }),
      },
    ],
  },
  "keys.addRoles": {
    needs: [key, "rbac.*.add_role_to_key"],
    body: (w) => ({ keyId: w.keyId, roles: [w.roleId] }),
  },
  "keys.removeRoles": { needs: [key], body: (w) => ({ keyId: w.keyId, roles: [w.roleId] }) },
  "keys.setRoles": { needs: [key], body: (w) => ({ keyId: w.keyId, roles: [w.roleId] }) },
  "ratelimit.limit": {
    needs: ["ratelimit.{namespaceId}.limit"],
    body: (w) => ({ namespace: w.namespace, identifier: "u", limit: 10, duration: 60_000 }),
  },
  "ratelimit.multiLimit": {
    needs: ["ratelimit.{namespaceId}.limit"],
    body: (w) => ({
      limits: [{ namespace: w.namespace, identifier: "u", limit: 10, duration: 60_000 }],
    }),
  },
  "ratelimit.setOverride": {
    needs: ["ratelimit.{namespaceId}.set_override"],
    body: (w) => ({ namespace: w.namespace, identifier: "x*", limit: 1, duration: 1000 }),
  },
  "ratelimit.getOverride": {
    needs: ["ratelimit.{namespaceId}.read_override"],
    body: (w) => ({ namespace: w.namespace, identifier: w.identifier }),
  },
  "ratelimit.listOverrides": {
    needs: ["ratelimit.{namespaceId}.read_override"],
    body: (w) => ({ namespace: w.namespace }),
  },
  "ratelimit.deleteOverride": {
    needs: ["ratelimit.{namespaceId}.delete_override"],
    body: (w) => ({ namespace: w.namespace, identifier: w.identifier }),
  },
  "analytics.getCreditUsage": {
    needs: ["api.{apiId}.read_analytics"],
    body: (w) => ({ keyId: w.keyId, start: 0, end: 86_400_000, granularity: "day" }),
  },
  "analytics.listAuditLogs": { needs: ["audit.*.read"], body: () => ({}) },
  "webhooks.createEndpoint": {
    needs: ["webhook.*.create_webhook"],
    body: () => ({ url: "https://hooks.example.com/pc", eventTypes: ["key.created"] }),
  },
  "webhooks.listEndpoints": { needs: ["webhook.*.read_webhook"], body: () => ({}) },
  "webhooks.updateEndpoint": {
    needs: ["webhook.{endpointId}.update_webhook"],
    body: (w) => ({ endpointId: w.endpointId, description: "pc" }),
  },
  "webhooks.deleteEndpoint": {
    needs: ["webhook.{endpointId}.delete_webhook"],
    body: (w) => ({ endpointId: w.endpointId }),
  },
  "webhooks.rotateSecret": {
    needs: ["webhook.{endpointId}.update_webhook"],
    body: (w) => ({ endpointId: w.endpointId }),
  },
  "webhooks.listDeliveries": {
    needs: ["webhook.{endpointId}.read_webhook"],
    body: (w) => ({ endpointId: w.endpointId }),
  },
  "webhooks.redeliver": {
    needs: ["webhook.{endpointId}.update_webhook"],
    body: (w) => ({ endpointId: w.endpointId, deliveryId: w.deliveryId }),
  },
  "identities.createIdentity": {
    needs: ["identity.*.create_identity"],
    body: () => ({ externalId: `pc_${randomString(8)}` }),
  },
  "identities.getIdentity": {
    needs: ["identity.{identityId}.read_identity"],
    body: (w) => ({ identity: w.identityId }),
  },
  "identities.listIdentities": { needs: ["identity.*.read_identity"], body: () => ({}) },
  "identities.updateIdentity": {
    needs: ["identity.{identityId}.update_identity"],
    body: (w) => ({ identity: w.identityId, meta: {} }),
  },
  "identities.deleteIdentity": {
    needs: ["identity.{identityId}.delete_identity"],
    body: (w) => ({ identity: w.identityId }),
  },
  "permissions.createPermission": {
    needs: ["rbac.*.create_permission"],
    body: () => ({ name: "pc.perm", slug: "pc.perm" }),
  },
  "permissions.getPermission": {
    needs: ["rbac.*.read_permission"],
    body: (w) => ({ permission: w.slug }),
  },
  "permissions.listPermissions": { needs: ["rbac.*.read_permission"], body: () => ({}) },
  "permissions.deletePermission": {
    needs: ["rbac.*.delete_permission"],
    body: (w) => ({ permission: w.slug }),
  },
  "permissions.createRole": {
    needs: ["rbac.*.create_role"],
    body: () => ({ name: `pc_role_${randomString(6)}` }),
    cases: [
      {
        label: "permissions to attach",
        needs: "rbac.*.add_permission_to_role",
        body: (w) => ({ name: `pc_role_${randomString(6)}`, permissions: [w.slug] }),
      },
      {
        label: "a permission that does not exist yet",
        needs: "rbac.*.create_permission",
        granted: ["rbac.*.add_permission_to_role"],
        body: () => ({ name: `pc_role_${randomString(6)}`, permissions: [fresh()] }),
      },
    ],
  },
  "permissions.getRole": { needs: ["rbac.*.read_role"], body: (w) => ({ role: w.roleId }) },
  "permissions.listRoles": { needs: ["rbac.*.read_role"], body: () => ({}) },
  "permissions.deleteRole": { needs: ["rbac.*.delete_role"], body: (w) => ({ role: w.roleId }) },
  "permissions.setRolePermissions": {
    needs: ["rbac.*.add_permission_to_role", "rbac.*.remove_permission_from_role"],
    body: (w) => ({ roleId: w.roleId, permissions: [w.slug] }),
    cases: [
      {
        label: "a permission that does not exist yet",
        needs: "rbac.*.create_permission",
        body: (w) => ({ roleId: w.roleId, permissions: [fresh()] }),
      },
    ],
  },
};

/** Checked by code of their own, with tests of their own (verification, analytics scope). */
const OWN_CHECKS = ["liveness.check", "keys.verifyKey", "analytics.getVerifications"];

const PROCEDURES = SERVICES.flatMap((service) =>
  service.methods.map((m) => `${namespaceOf(service)}.${m.localName}`),
).filter((p) => !OWN_CHECKS.includes(p));

/** `{placeholders}` filled with the world's ids, or with `*` for a grant. */
function fill(template: string, w: World | null): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) =>
    w ? String(w[name as keyof World]) : "*",
  );
}

/** A grant that is none of the procedure's own, so no key is granted nothing at all. */
const filler = (procedure: string) =>
  procedure.startsWith("identities.") ? "rbac.*.read_role" : "identity.*.read_identity";

async function refused(procedure: string, grants: string[], body: Body, missing: string) {
  const rootKey = await s.seed.rootKey(grants.length > 0 ? grants : [filler(procedure)]);
  const res = await s.call("json", procedure, body, rootKey);
  expect(res.status).toBe(403);
  expect(res.error?.code).toBe("err:svc:authorization:insufficient_permissions");
  expect(res.error?.detail).toContain(`'${missing}'`);
}

let w: World;

beforeAll(async () => {
  const ok = async (procedure: string, body: Body) => {
    const res = await s.call("json", procedure, body);
    if (res.status !== 200) throw new Error(`${procedure}: ${JSON.stringify(res.error)}`);
    return res.data;
  };
  const slug = `pc.perm.${randomString(8).toLowerCase()}`;
  const namespace = `pc.ns.${randomString(8).toLowerCase()}`;
  const apiId = await s.seed.api();
  const endpoint = await ok("webhooks.createEndpoint", {
    url: "https://hooks.example.com/pc",
    eventTypes: ["key.created"],
  });
  await ok("permissions.createPermission", { name: slug, slug });
  const role = await ok("permissions.createRole", { name: `pc_${randomString(8)}` });
  const identity = await ok("identities.createIdentity", { externalId: `pc_${randomString(8)}` });
  const created = await ok("keys.createKey", {
    apiId,
    permissions: [slug],
    credits: { remaining: 100 },
  });
  const reserved = await ok("keys.verifyKey", { key: created.key, credits: { reserve: 1 } });
  await ok("ratelimit.limit", { namespace, identifier: "u", limit: 10, duration: 60_000 });
  await ok("ratelimit.setOverride", { namespace, identifier: "vip", limit: 5, duration: 60_000 });
  const ns = await s.db.query<{ id: string }>(
    "select id from ratelimit_namespaces where workspace_id = $1 and name = $2",
    [s.workspaceId, namespace],
  );
  w = {
    apiId,
    keyId: created.keyId,
    key: created.key,
    identityId: identity.identityId,
    slug,
    roleId: role.roleId,
    namespace,
    namespaceId: ns[0]?.id as string,
    identifier: "vip",
    reservationId: reserved.reservationId,
    endpointId: endpoint.endpoint.id,
    deliveryId: (
      await s.db.query<{ id: string }>("select id from webhook_deliveries where endpoint_id = $1", [
        endpoint.endpoint.id,
      ])
    )[0]?.id as string,
  };
});

it("has a row for every procedure checked through authorization", () => {
  expect(Object.keys(TABLE).sort()).toEqual([...PROCEDURES].sort());
});

const BASE = PROCEDURES.flatMap((procedure) =>
  (TABLE[procedure]?.needs ?? []).map((missing) => ({ procedure, missing })),
);

describe("a root key holding every permission but one", () => {
  it.each(BASE)("$procedure without $missing: 403 naming it", async ({ procedure, missing }) => {
    const row = TABLE[procedure] as Row;
    const grants = row.needs.filter((p) => p !== missing).map((p) => fill(p, null));
    await refused(procedure, grants, row.body(w), fill(missing, w));
  });
});

const CASES = PROCEDURES.flatMap((procedure) =>
  (TABLE[procedure]?.cases ?? []).map((c) => ({ procedure, ...c })),
);

describe("a root key without the permission a particular request needs", () => {
  it.each(CASES)(
    "$procedure with $label, without $needs: 403 naming it",
    async ({ procedure, needs, body, granted }) => {
      const row = TABLE[procedure] as Row;
      const grants = [...row.needs.map((p) => fill(p, null)), ...(granted ?? [])];
      await refused(procedure, grants, body(w), needs);
    },
  );
});

describe("creating a rate-limit namespace on first use", () => {
  it.each(["ratelimit.limit", "ratelimit.multiLimit"])(
    "%s needs the limit permission for every namespace, and creates nothing without it",
    async (procedure) => {
      const namespace = fresh();
      const one = { namespace, identifier: "u", limit: 10, duration: 60_000 };
      const body = procedure === "ratelimit.limit" ? one : { limits: [one] };
      await refused(procedure, [`ratelimit.${w.namespaceId}.limit`], body, "ratelimit.*.limit");
      const rows = await s.db.query(
        "select 1 from ratelimit_namespaces where workspace_id = $1 and name = $2",
        [s.workspaceId, namespace],
      );
      expect(rows).toEqual([]);
    },
  );
});
