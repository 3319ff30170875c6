import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { countOf, ROUNDS, together } from "../harness/race.js";
import { useServer } from "../harness/server.js";

// Concurrent writes to roles, permissions and rate-limit namespaces that conflict end in a
// consistent state, and each caller gets a clean answer: 200, or 403/404/409 from the
// catalog, never a 5xx. Each race runs many rounds of calls started at once.

const s = useServer();
const call =
  (procedure: string, body: unknown, key: string = s.rootKey) =>
  () =>
    s.call("json", procedure, body, key);
let n = 0;
const unique = (base: string) => `${base}_${++n}_${randomBytes(3).toString("hex")}`;

const count = async (sql: string, params: unknown[]) =>
  (await s.db.query<{ n: number }>(sql, params))[0]?.n;
const slugs = (list: { slug: string }[]) => list.map((p) => p.slug).sort();

describe("concurrent writes to roles and permissions", () => {
  it("of concurrent createPermission calls with one slug exactly one succeeds, the others are 409", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const slug = unique("perm.race");
      const create = call("permissions.createPermission", { name: slug, slug });
      const results = await together([create, create, create], [200, 409]);
      expect(countOf(results, 200)).toBe(1);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.error?.code).toBe("err:svc:data:permission_already_exists");
      }
    }
  });

  it("of concurrent createRole calls with one name exactly one succeeds, the others are 409", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const name = unique("role_race");
      const create = call("permissions.createRole", { name, permissions: [`${name}.read`] });
      const results = await together([create, create, create], [200, 409]);
      expect(countOf(results, 200)).toBe(1);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.error?.code).toBe("err:svc:data:role_already_exists");
      }
      const made = "select count(*)::int as n from permissions where slug = $1";
      expect(await count(made, [`${name}.read`])).toBe(1);
    }
  });

  it("concurrent setRolePermissions calls leave exactly one caller's set, not a mix", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const name = unique("role_set");
      const role = await s.call("json", "permissions.createRole", { name });
      const sets = [[`${name}.a`], [`${name}.b`], [`${name}.c`, `${name}.a`]];
      const set = (permissions: string[]) =>
        call("permissions.setRolePermissions", { roleId: role.data.roleId, permissions });
      await together(sets.map(set), [200]);
      const got = await s.call("json", "permissions.getRole", { role: role.data.roleId });
      expect(sets.map((x) => [...x].sort())).toContainEqual(slugs(got.data.permissions));
    }
  });

  it("concurrent setPermissions calls on a key leave exactly one caller's set", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const k = await s.seed.key();
      const base = unique("key.set");
      const sets = [[`${base}.a`], [`${base}.b`], [`${base}.c`, `${base}.a`]];
      const set = (permissions: string[]) =>
        call("keys.setPermissions", { keyId: k.keyId, permissions });
      await together(sets.map(set), [200]);
      const got = await s.call("json", "keys.getKey", { keyId: k.keyId });
      expect(sets.map((x) => [...x].sort())).toContainEqual([...got.data.permissions].sort());
    }
  });

  it("addPermissions racing deletePermission of that slug never fails, and leaves no half grant", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const k = await s.seed.key();
      const slug = unique("perm.gone");
      await s.seed.permission(slug);
      const add = call("keys.addPermissions", { keyId: k.keyId, permissions: [slug] });
      await together(
        [add, call("permissions.deletePermission", { permission: slug }), add],
        [200, 404],
      );
      const got = await s.call("json", "keys.getKey", { keyId: k.keyId });
      const exists = "select count(*)::int as n from permissions where slug = $1";
      // A grant names a live permission: the key holds the slug exactly when it exists.
      expect(got.data.permissions ?? []).toEqual((await count(exists, [slug])) ? [slug] : []);
    }
  });

  it("addRoles and createKey racing deleteRole are 200 or 404, never a 5xx", async () => {
    const apiId = await s.seed.api();
    for (let round = 0; round < ROUNDS; round++) {
      const k = await s.seed.key({ apiId });
      const name = unique("role_gone");
      await s.call("json", "permissions.createRole", { name });
      const results = await together(
        [
          call("keys.addRoles", { keyId: k.keyId, roles: [name] }),
          call("permissions.deleteRole", { role: name }),
          call("keys.createKey", { apiId, roles: [name] }),
          call("keys.setRoles", { keyId: k.keyId, roles: [name] }),
        ],
        [200, 404],
      );
      expect(results[1]?.status).toBe(200);
      const left =
        "select count(*)::int as n from keys_roles kr join roles r on r.id = kr.role_id where r.name = $1";
      expect(await count(left, [name])).toBe(0);
    }
  });

  it("rerollKey racing deletePermission and deleteRole never brings a deleted one back, and never fails", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const slug = unique("perm.reroll");
      const role = unique("role_reroll");
      await s.call("json", "permissions.createRole", { name: role });
      const k = await s.seed.key({ permissions: [slug], roles: [role] });
      const results = await together(
        [
          call("keys.rerollKey", { keyId: k.keyId, expiration: 0 }),
          call("permissions.deletePermission", { permission: slug }),
          call("permissions.deleteRole", { role }),
        ],
        [200],
      );
      // Both deletions went through, before or after the reroll: the permission and the role
      // are gone, and no key (the new one included) holds them.
      const newKeyId = results[0]?.data.keyId as string;
      const got = await s.call("json", "keys.getKey", { keyId: newKeyId });
      expect(got.data.permissions ?? []).toEqual([]);
      expect(got.data.roles ?? []).toEqual([]);
      expect(
        await count("select count(*)::int as n from permissions where slug = $1", [slug]),
      ).toBe(0);
    }
  });

  it("a root key that may not create permissions never creates one, even while it is being deleted", async () => {
    const limited = await s.seed.rootKeyWithId([
      "rbac.*.add_permission_to_role",
      "rbac.*.remove_permission_from_role",
    ]);
    for (let round = 0; round < ROUNDS; round++) {
      const slug = unique("perm.guarded");
      await s.seed.permission(slug);
      const role = await s.call("json", "permissions.createRole", { name: unique("role_g") });
      const body = { roleId: role.data.roleId, permissions: [slug] };
      await together(
        [
          call("permissions.setRolePermissions", body, limited.secret),
          call("permissions.deletePermission", { permission: slug }),
        ],
        [200, 403],
      );
      const created = `select count(*)::int as n from audit_logs
        where actor_id = $1 and event = 'permission.create'`;
      expect(await count(created, [limited.id])).toBe(0);
    }
  });
});

describe("concurrent writes to rate limits", () => {
  it("concurrent setOverride calls for one identifier all succeed on one override", async () => {
    const namespace = unique("ns_override");
    await s.call("json", "ratelimit.limit", {
      namespace,
      identifier: "warm-up",
      limit: 10,
      duration: 60_000,
    });
    for (let round = 0; round < ROUNDS; round++) {
      const identifier = unique("user");
      const set = (limit: number) =>
        call("ratelimit.setOverride", { namespace, identifier, limit, duration: 60_000 });
      const results = await together([set(1), set(2), set(3)], [200]);
      expect(new Set(results.map((r) => r.data.overrideId)).size).toBe(1);
    }
  });

  it("concurrent limit calls on a new namespace all decide, creating one namespace", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const namespace = unique("ns_new");
      const limit = call("ratelimit.limit", {
        namespace,
        identifier: "someone",
        limit: 10,
        duration: 60_000,
      });
      await together([limit, limit, limit, limit], [200]);
      const rows = "select count(*)::int as n from ratelimit_namespaces where name = $1";
      expect(await count(rows, [namespace])).toBe(1);
    }
  });
});
