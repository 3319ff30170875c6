import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { countOf, ROUNDS, together } from "../harness/race.js";
import { useServer } from "../harness/server.js";

// Concurrent writes to roles, permissions and rate-limit namespaces that conflict end in a
// consistent state, and each caller gets a clean answer: 200, or 403/404/409 from the
// catalog, never a 5xx. Each race runs many rounds of calls started at once. The races cross
// namespaces (a key's grants against the deletion of what it is granted), so they live with
// the write path's other guarantees rather than with one procedure.

const s = useServer();
let n = 0;
const unique = (base: string) => `${base}_${++n}_${randomBytes(3).toString("hex")}`;

const count = async (sql: string, params: unknown[]) =>
  (await s.db.query<{ n: number }>(sql, params))[0]?.n;
const sorted = (list: string[]) => [...list].sort();

/** A new role of this name (and permissions); returns its id. */
const roleOf = async (name: string, permissions: string[] = []) =>
  (await s.api.permissions.createRole({ name, permissions })).data?.roleId as string;

describe("concurrent writes to roles and permissions", () => {
  it("of concurrent createPermission calls with one slug exactly one succeeds, the others are 409", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const slug = unique("perm.race");
      const create = () => s.api.permissions.createPermission({ name: slug, slug });
      const results = await together([create, create, create], [200, 409]);
      expect(countOf(results, 200)).toBe(1);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.errorCode).toBe("err:svc:data:permission_already_exists");
      }
    }
  });

  it("of concurrent createRole calls with one name exactly one succeeds, the others are 409", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const name = unique("role_race");
      const create = () => s.api.permissions.createRole({ name, permissions: [`${name}.read`] });
      const results = await together([create, create, create], [200, 409]);
      expect(countOf(results, 200)).toBe(1);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.errorCode).toBe("err:svc:data:role_already_exists");
      }
      const made = "select count(*)::int as n from permissions where slug = $1";
      expect(await count(made, [`${name}.read`])).toBe(1);
    }
  });

  it("concurrent setRolePermissions calls leave exactly one caller's set, not a mix", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const name = unique("role_set");
      const roleId = await roleOf(name);
      const sets = [[`${name}.a`], [`${name}.b`], [`${name}.c`, `${name}.a`]];
      const set = (permissions: string[]) => () =>
        s.api.permissions.setRolePermissions({ roleId, permissions });
      await together(sets.map(set), [200]);
      const got = await s.api.permissions.getRole({ role: roleId });
      const held = sorted(got.data?.permissions.map((p) => p.slug) ?? []);
      expect(sets.map(sorted)).toContainEqual(held);
    }
  });

  it("concurrent setPermissions calls on a key leave exactly one caller's set", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { keyId } = await s.seed.key();
      const base = unique("key.set");
      const sets = [[`${base}.a`], [`${base}.b`], [`${base}.c`, `${base}.a`]];
      const set = (permissions: string[]) => () =>
        s.api.keys.setPermissions({ keyId, permissions });
      await together(sets.map(set), [200]);
      const got = await s.api.keys.getKey({ keyId });
      expect(sets.map(sorted)).toContainEqual(sorted(got.data?.permissions ?? []));
    }
  });

  it("addPermissions racing deletePermission of that slug never fails, and leaves no half grant", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { keyId } = await s.seed.key();
      const slug = unique("perm.gone");
      await s.seed.permission(slug);
      const add = () => s.api.keys.addPermissions({ keyId, permissions: [slug] });
      const remove = () => s.api.permissions.deletePermission({ permission: slug });
      await together([add, remove, add], [200, 404]);
      const got = await s.api.keys.getKey({ keyId });
      const exists = "select count(*)::int as n from permissions where slug = $1";
      // A grant names a live permission: the key holds the slug exactly when it exists.
      expect(got.data?.permissions).toEqual((await count(exists, [slug])) ? [slug] : []);
    }
  });

  it("addRoles and createKey racing deleteRole are 200 or 404, never a 5xx", async () => {
    const apiId = await s.seed.api();
    for (let round = 0; round < ROUNDS; round++) {
      const { keyId } = await s.seed.key({ apiId });
      const name = unique("role_gone");
      await roleOf(name);
      const results = await together(
        [
          () => s.api.keys.addRoles({ keyId, roles: [name] }),
          () => s.api.permissions.deleteRole({ role: name }),
          () => s.api.keys.createKey({ apiId, roles: [name] }),
          () => s.api.keys.setRoles({ keyId, roles: [name] }),
        ],
        [200, 404],
      );
      expect(results[1].status).toBe(200);
      const left =
        "select count(*)::int as n from keys_roles kr join roles r on r.id = kr.role_id where r.name = $1";
      expect(await count(left, [name])).toBe(0);
    }
  });

  it("rerollKey racing deletePermission and deleteRole never brings a deleted one back, and never fails", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const slug = unique("perm.reroll");
      const role = unique("role_reroll");
      await roleOf(role);
      const { keyId } = await s.seed.key({ permissions: [slug], roles: [role] });
      const [reroll] = await together(
        [
          () => s.api.keys.rerollKey({ keyId, expiration: 0n }),
          () => s.api.permissions.deletePermission({ permission: slug }),
          () => s.api.permissions.deleteRole({ role }),
        ],
        [200],
      );
      // Both deletions went through, before or after the reroll: the permission and the role
      // are gone, and no key (the new one included) holds them.
      const got = await s.api.keys.getKey({ keyId: reroll.value?.data?.keyId as string });
      expect(got.data?.permissions).toEqual([]);
      expect(got.data?.roles).toEqual([]);
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
      const roleId = await roleOf(unique("role_g"));
      await together(
        [
          () =>
            s.as(limited.secret).permissions.setRolePermissions({ roleId, permissions: [slug] }),
          () => s.api.permissions.deletePermission({ permission: slug }),
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
    await s.api.ratelimit.limit({
      namespace,
      identifier: "warm-up",
      limit: 10n,
      duration: 60_000n,
    });
    for (let round = 0; round < ROUNDS; round++) {
      const identifier = unique("user");
      const set = (limit: bigint) => () =>
        s.api.ratelimit.setOverride({ namespace, identifier, limit, duration: 60_000n });
      const results = await together([set(1n), set(2n), set(3n)], [200]);
      expect(new Set(results.map((r) => r.value?.data?.overrideId)).size).toBe(1);
    }
  });

  it("concurrent limit calls on a new namespace all decide, creating one namespace", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const namespace = unique("ns_new");
      const limit = () =>
        s.api.ratelimit.limit({ namespace, identifier: "someone", limit: 10n, duration: 60_000n });
      await together([limit, limit, limit, limit], [200]);
      const rows = "select count(*)::int as n from ratelimit_namespaces where name = $1";
      expect(await count(rows, [namespace])).toBe(1);
    }
  });
});
