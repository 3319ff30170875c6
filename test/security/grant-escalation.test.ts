import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { randomString } from "../../src/domain/random.js";
import type { CallResult, TestDoor } from "../harness/doors.js";
import { useServer } from "../harness/server.js";
import type { Snapshot } from "../harness/snapshot.js";

// A root key made to issue or update keys of one API must not hand out what it could not
// grant by itself: every field that gives a key a role or a permission, takes one away,
// or creates a permission or an identity needs the grant of its own.

const s = useServer();

type Body = Record<string, unknown>;

/** What each case works on: a fresh API with one key holding a role and a permission. */
interface World {
  apiId: string;
  keyId: string;
  /** A role the key does not hold ("admin" of the owner's product, say). */
  role: string;
  /** The role the key holds. */
  heldRole: string;
  /** A permission that exists and the key does not hold. */
  slug: string;
  /** The direct permission the key holds. */
  heldSlug: string;
  /** A permission slug that does not exist yet. */
  newSlug: string;
  /** The externalId of an existing identity. */
  externalId: string;
  /** An externalId no identity has yet. */
  newExternalId: string;
}

async function world(): Promise<World> {
  const r = randomString(8).toLowerCase();
  const w = {
    apiId: await s.seed.api(),
    role: `ge_admin_${r}`,
    heldRole: `ge_held_${r}`,
    slug: `ge.perm.${r}`,
    heldSlug: `ge.held.${r}`,
    newSlug: `ge.new.${r}`,
    externalId: (await s.seed.identity()).externalId,
    newExternalId: `ge_user_${r}`,
  };
  await s.seed.permission(w.slug);
  await s.seed.permission(w.heldSlug);
  for (const name of [w.role, w.heldRole]) {
    const res = await s.call("json", "permissions.createRole", { name });
    expect(res.status).toBe(200);
  }
  const k = await s.seed.key({ apiId: w.apiId, roles: [w.heldRole], permissions: [w.heldSlug] });
  return { ...w, keyId: k.keyId };
}

/** What the key a case touched must hold once the call succeeded. */
interface Expected {
  roles?: string[];
  permissions?: string[];
  externalId?: string;
}

interface Case {
  /** The guarantee, as the test names it. */
  name: string;
  procedure: string;
  body: (w: World) => Body;
  /** What the root key holds: everything the call needs but `missing`. */
  holds: (w: World) => string[];
  missing: string;
  /** The key the call touched (its own for updates, the new one for creations). */
  keyOf: (res: CallResult, w: World) => string;
  expected: (w: World) => Expected;
}

const ADD_ROLE = "rbac.*.add_role_to_key";
const REMOVE_ROLE = "rbac.*.remove_role_from_key";
const ADD_PERMISSION = "rbac.*.add_permission_to_key";
const REMOVE_PERMISSION = "rbac.*.remove_permission_from_key";
const CREATE_PERMISSION = "rbac.*.create_permission";
const CREATE_IDENTITY = "identity.*.create_identity";

const create = (w: World) => `api.${w.apiId}.create_key`;
const update = (w: World) => `api.${w.apiId}.update_key`;
const created = (res: CallResult) => res.data.keyId as string;
const migrated = (res: CallResult) => res.data.migrated[0].keyId as string;
const same = (_: CallResult, w: World) => w.keyId;
const hash = () => randomBytes(32).toString("hex");

const CREATE_CASES: Case[] = [
  {
    name: "keys.createKey with roles needs add_role_to_key",
    procedure: "keys.createKey",
    body: (w) => ({ apiId: w.apiId, roles: [w.role] }),
    holds: (w) => [create(w)],
    missing: ADD_ROLE,
    keyOf: created,
    expected: (w) => ({ roles: [w.role] }),
  },
  {
    name: "keys.createKey with permissions needs add_permission_to_key",
    procedure: "keys.createKey",
    body: (w) => ({ apiId: w.apiId, permissions: [w.slug] }),
    holds: (w) => [create(w)],
    missing: ADD_PERMISSION,
    keyOf: created,
    expected: (w) => ({ permissions: [w.slug] }),
  },
  {
    name: "keys.createKey with a permission that does not exist needs create_permission",
    procedure: "keys.createKey",
    body: (w) => ({ apiId: w.apiId, permissions: [w.slug, w.newSlug] }),
    holds: (w) => [create(w), ADD_PERMISSION],
    missing: CREATE_PERMISSION,
    keyOf: created,
    expected: (w) => ({ permissions: [w.newSlug, w.slug] }),
  },
  {
    name: "keys.createKey with an externalId no identity has needs create_identity",
    procedure: "keys.createKey",
    body: (w) => ({ apiId: w.apiId, externalId: w.newExternalId }),
    holds: (w) => [create(w)],
    missing: CREATE_IDENTITY,
    keyOf: created,
    expected: (w) => ({ externalId: w.newExternalId }),
  },
  {
    name: "keys.migrateKeys with roles needs add_role_to_key",
    procedure: "keys.migrateKeys",
    body: (w) => ({
      migrationId: "grant-escalation",
      apiId: w.apiId,
      keys: [{ hash: hash() }, { hash: hash(), roles: [w.role] }],
    }),
    holds: (w) => [create(w)],
    missing: ADD_ROLE,
    keyOf: (res) => res.data.migrated[1].keyId,
    expected: (w) => ({ roles: [w.role] }),
  },
  {
    name: "keys.migrateKeys with permissions needs add_permission_to_key",
    procedure: "keys.migrateKeys",
    body: (w) => ({
      migrationId: "grant-escalation",
      apiId: w.apiId,
      keys: [{ hash: hash(), permissions: [w.slug] }],
    }),
    holds: (w) => [create(w)],
    missing: ADD_PERMISSION,
    keyOf: migrated,
    expected: (w) => ({ permissions: [w.slug] }),
  },
  {
    name: "keys.migrateKeys with a permission that does not exist needs create_permission",
    procedure: "keys.migrateKeys",
    body: (w) => ({
      migrationId: "grant-escalation",
      apiId: w.apiId,
      keys: [{ hash: hash(), permissions: [w.newSlug] }],
    }),
    holds: (w) => [create(w), ADD_PERMISSION],
    missing: CREATE_PERMISSION,
    keyOf: migrated,
    expected: (w) => ({ permissions: [w.newSlug] }),
  },
  {
    name: "keys.migrateKeys with an externalId no identity has needs create_identity",
    procedure: "keys.migrateKeys",
    body: (w) => ({
      migrationId: "grant-escalation",
      apiId: w.apiId,
      keys: [
        { hash: hash(), externalId: w.externalId },
        { hash: hash(), externalId: w.newExternalId },
      ],
    }),
    holds: (w) => [create(w)],
    missing: CREATE_IDENTITY,
    keyOf: (res) => res.data.migrated[1].keyId,
    expected: (w) => ({ externalId: w.newExternalId }),
  },
];

// A reroll gives the new key the old one's roles and direct permissions: the same grant as a
// createKey naming them, so the same permissions, decided on what the key holds.
const REROLL_CASES: Case[] = [
  {
    name: "keys.rerollKey of a key holding roles needs add_role_to_key",
    procedure: "keys.rerollKey",
    body: (w) => ({ keyId: w.keyId, expiration: 0 }),
    holds: (w) => [create(w), ADD_PERMISSION],
    missing: ADD_ROLE,
    keyOf: created,
    expected: (w) => ({ roles: [w.heldRole], permissions: [w.heldSlug] }),
  },
  {
    name: "keys.rerollKey of a key holding direct permissions needs add_permission_to_key",
    procedure: "keys.rerollKey",
    body: (w) => ({ keyId: w.keyId, expiration: 0 }),
    holds: (w) => [create(w), ADD_ROLE],
    missing: ADD_PERMISSION,
    keyOf: created,
    expected: (w) => ({ roles: [w.heldRole], permissions: [w.heldSlug] }),
  },
];

const UPDATE_CASES: Case[] = [
  {
    name: "keys.updateKey with roles needs add_role_to_key",
    procedure: "keys.updateKey",
    body: (w) => ({ keyId: w.keyId, roles: [w.role] }),
    holds: (w) => [update(w), REMOVE_ROLE],
    missing: ADD_ROLE,
    keyOf: same,
    expected: (w) => ({ roles: [w.role] }),
  },
  {
    name: "keys.updateKey with roles needs remove_role_from_key (they replace the key's)",
    procedure: "keys.updateKey",
    body: (w) => ({ keyId: w.keyId, roles: [w.role] }),
    holds: (w) => [update(w), ADD_ROLE],
    missing: REMOVE_ROLE,
    keyOf: same,
    expected: (w) => ({ roles: [w.role] }),
  },
  {
    name: "keys.updateKey clearing roles needs remove_role_from_key",
    procedure: "keys.updateKey",
    body: (w) => ({ keyId: w.keyId, roles: [] }),
    holds: (w) => [update(w), ADD_ROLE],
    missing: REMOVE_ROLE,
    keyOf: same,
    expected: () => ({ roles: [] }),
  },
  {
    name: "keys.updateKey with permissions needs add_permission_to_key",
    procedure: "keys.updateKey",
    body: (w) => ({ keyId: w.keyId, permissions: [w.slug] }),
    holds: (w) => [update(w), REMOVE_PERMISSION],
    missing: ADD_PERMISSION,
    keyOf: same,
    expected: (w) => ({ permissions: [w.slug] }),
  },
  {
    name: "keys.updateKey with permissions needs remove_permission_from_key (they replace the key's)",
    procedure: "keys.updateKey",
    body: (w) => ({ keyId: w.keyId, permissions: [w.slug] }),
    holds: (w) => [update(w), ADD_PERMISSION],
    missing: REMOVE_PERMISSION,
    keyOf: same,
    expected: (w) => ({ permissions: [w.slug] }),
  },
  {
    name: "keys.updateKey with a permission that does not exist needs create_permission",
    procedure: "keys.updateKey",
    body: (w) => ({ keyId: w.keyId, permissions: [w.newSlug] }),
    holds: (w) => [update(w), ADD_PERMISSION, REMOVE_PERMISSION],
    missing: CREATE_PERMISSION,
    keyOf: same,
    expected: (w) => ({ permissions: [w.newSlug] }),
  },
  {
    name: "keys.updateKey with an externalId no identity has needs create_identity",
    procedure: "keys.updateKey",
    body: (w) => ({ keyId: w.keyId, externalId: w.newExternalId }),
    holds: (w) => [update(w)],
    missing: CREATE_IDENTITY,
    keyOf: same,
    expected: (w) => ({ externalId: w.newExternalId }),
  },
  {
    name: "keys.setRoles needs add_role_to_key",
    procedure: "keys.setRoles",
    body: (w) => ({ keyId: w.keyId, roles: [w.role] }),
    holds: (w) => [update(w), REMOVE_ROLE],
    missing: ADD_ROLE,
    keyOf: same,
    expected: (w) => ({ roles: [w.role] }),
  },
  {
    name: "keys.setRoles needs remove_role_from_key",
    procedure: "keys.setRoles",
    body: (w) => ({ keyId: w.keyId, roles: [w.role] }),
    holds: (w) => [update(w), ADD_ROLE],
    missing: REMOVE_ROLE,
    keyOf: same,
    expected: (w) => ({ roles: [w.role] }),
  },
  {
    name: "keys.addRoles needs add_role_to_key",
    procedure: "keys.addRoles",
    body: (w) => ({ keyId: w.keyId, roles: [w.role] }),
    holds: (w) => [update(w)],
    missing: ADD_ROLE,
    keyOf: same,
    expected: (w) => ({ roles: [w.role, w.heldRole].sort() }),
  },
  {
    name: "keys.removeRoles needs remove_role_from_key",
    procedure: "keys.removeRoles",
    body: (w) => ({ keyId: w.keyId, roles: [w.heldRole] }),
    holds: (w) => [update(w)],
    missing: REMOVE_ROLE,
    keyOf: same,
    expected: () => ({ roles: [] }),
  },
  {
    name: "keys.setPermissions needs add_permission_to_key",
    procedure: "keys.setPermissions",
    body: (w) => ({ keyId: w.keyId, permissions: [w.slug] }),
    holds: (w) => [update(w), REMOVE_PERMISSION],
    missing: ADD_PERMISSION,
    keyOf: same,
    expected: (w) => ({ permissions: [w.slug] }),
  },
  {
    name: "keys.setPermissions needs remove_permission_from_key",
    procedure: "keys.setPermissions",
    body: (w) => ({ keyId: w.keyId, permissions: [w.slug] }),
    holds: (w) => [update(w), ADD_PERMISSION],
    missing: REMOVE_PERMISSION,
    keyOf: same,
    expected: (w) => ({ permissions: [w.slug] }),
  },
  {
    name: "keys.setPermissions with a permission that does not exist needs create_permission",
    procedure: "keys.setPermissions",
    body: (w) => ({ keyId: w.keyId, permissions: [w.newSlug] }),
    holds: (w) => [update(w), ADD_PERMISSION, REMOVE_PERMISSION],
    missing: CREATE_PERMISSION,
    keyOf: same,
    expected: (w) => ({ permissions: [w.newSlug] }),
  },
  {
    name: "keys.addPermissions needs add_permission_to_key",
    procedure: "keys.addPermissions",
    body: (w) => ({ keyId: w.keyId, permissions: [w.slug] }),
    holds: (w) => [update(w)],
    missing: ADD_PERMISSION,
    keyOf: same,
    expected: (w) => ({ permissions: [w.heldSlug, w.slug] }),
  },
  {
    name: "keys.addPermissions with a permission that does not exist needs create_permission",
    procedure: "keys.addPermissions",
    body: (w) => ({ keyId: w.keyId, permissions: [w.newSlug] }),
    holds: (w) => [update(w), ADD_PERMISSION],
    missing: CREATE_PERMISSION,
    keyOf: same,
    expected: (w) => ({ permissions: [w.heldSlug, w.newSlug] }),
  },
  {
    name: "keys.removePermissions needs remove_permission_from_key",
    procedure: "keys.removePermissions",
    body: (w) => ({ keyId: w.keyId, permissions: [w.heldSlug] }),
    holds: (w) => [update(w)],
    missing: REMOVE_PERMISSION,
    keyOf: same,
    expected: () => ({ permissions: [] }),
  },
];

/** The doors the rule is shown through: the /v2 JSON door and gRPC. */
const DOORS_UNDER_TEST: readonly TestDoor[] = ["json", "grpc"];

async function settled(): Promise<Snapshot> {
  await s.app.deps.events.flush();
  return s.snapshot();
}

/** The key as getKey shows it: roles, direct permissions, the identity's externalId. */
async function keyState(keyId: string) {
  const res = await s.call("json", "keys.getKey", { keyId });
  expect(res.status).toBe(200);
  return res.data;
}

async function expectHolds(keyId: string, expected: Expected): Promise<void> {
  const key = await keyState(keyId);
  if (expected.roles) expect(key.roles ?? []).toEqual(expected.roles);
  // Only direct permissions are asked for here: the roles of these cases carry none.
  if (expected.permissions) expect(key.permissions ?? []).toEqual(expected.permissions);
  if (expected.externalId) expect(key.identity?.externalId).toBe(expected.externalId);
}

describe.each(DOORS_UNDER_TEST)("grants through key fields, via %s", (door) => {
  it.each([...CREATE_CASES, ...REROLL_CASES, ...UPDATE_CASES])(
    "$name: 403 naming it and nothing written; with it, 200",
    async (c) => {
      const w = await world();
      const narrow = await s.seed.rootKey(c.holds(w));
      const before = await settled();
      const refused = await s.call(door, c.procedure, c.body(w), narrow);
      expect(refused.status).toBe(403);
      expect(refused.error?.code).toBe("err:svc:authorization:insufficient_permissions");
      expect(refused.error?.detail).toBe(`Missing permission: '${c.missing}'.`);
      expect(await s.changesSince(before)).toEqual({});

      const granted = await s.seed.rootKey([...c.holds(w), c.missing]);
      const res = await s.call(door, c.procedure, c.body(w), granted);
      expect(res.status).toBe(200);
      await expectHolds(c.keyOf(res, w), c.expected(w));
    },
  );

  it("a key for an existing identity needs no identity grant, as before", async () => {
    const w = await world();
    const narrow = await s.seed.rootKey([create(w)]);
    const res = await s.call(
      door,
      "keys.createKey",
      { apiId: w.apiId, externalId: w.externalId },
      narrow,
    );
    expect(res.status).toBe(200);
    await expectHolds(res.data.keyId, { externalId: w.externalId });
    const updater = await s.seed.rootKey([update(w)]);
    const linked = await s.call(
      door,
      "keys.updateKey",
      { keyId: w.keyId, externalId: w.externalId },
      updater,
    );
    expect(linked.status).toBe(200);
    await expectHolds(w.keyId, { externalId: w.externalId, roles: [w.heldRole] });
  });

  it("create_key or update_key alone still issues and changes keys that grant nothing", async () => {
    const w = await world();
    const narrow = await s.seed.rootKey([create(w), update(w)]);
    const made = await s.call(
      door,
      "keys.createKey",
      { apiId: w.apiId, name: "plain", roles: [], permissions: [] },
      narrow,
    );
    expect(made.status).toBe(200);
    const renamed = await s.call(
      door,
      "keys.updateKey",
      { keyId: w.keyId, name: "renamed" },
      narrow,
    );
    expect(renamed.status).toBe(200);
    await expectHolds(w.keyId, { roles: [w.heldRole], permissions: [w.heldSlug] });
  });

  it("create_key alone still rerolls a key that holds no role and no permission", async () => {
    const w = await world();
    const plain = await s.seed.key({ apiId: w.apiId });
    const narrow = await s.seed.rootKey([create(w)]);
    const res = await s.call(door, "keys.rerollKey", { keyId: plain.keyId, expiration: 0 }, narrow);
    expect(res.status).toBe(200);
    await expectHolds(res.data.keyId, { roles: [], permissions: [] });
  });

  it("rerolling another workspace's key is 404 before any grant is asked for", async () => {
    const w = await world();
    const other = await s.seed.workspace();
    const narrow = await s.seed.rootKey(["api.*.create_key"], other);
    const res = await s.call(door, "keys.rerollKey", { keyId: w.keyId, expiration: 0 }, narrow);
    expect(res.status).toBe(404);
    expect(res.error?.code).toBe("err:svc:data:key_not_found");
  });

  it("an unknown key is 404 before any grant is asked for", async () => {
    const narrow = await s.seed.rootKey(["api.*.update_key"]);
    const res = await s.call(
      door,
      "keys.updateKey",
      { keyId: "key_missing", roles: ["x"] },
      narrow,
    );
    expect(res.status).toBe(404);
    expect(res.error?.code).toBe("err:svc:data:key_not_found");
  });
});
