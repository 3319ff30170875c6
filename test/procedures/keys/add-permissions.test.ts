import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;
const slugs = (xs: { slug: string }[]) => xs.map((x) => x.slug);
const roleNames = (xs: { name: string }[]) => xs.map((x) => x.name);

describe.each(DOORS)("key permissions via %s", (door) => {
  it("adds (creating missing ones), removes and sets direct permissions", async () => {
    const p = `kp${++n}`;
    const k = await s.seed.key({ permissions: [`${p}.a`] });
    const add = await s.call(door, "keys.addPermissions", {
      keyId: k.keyId,
      permissions: [`${p}.c`, `${p}.b`, `${p}.a`, `${p}.b`],
    });
    expect(add.status).toBe(200);
    expect(slugs(add.data)).toEqual([`${p}.a`, `${p}.b`, `${p}.c`]);
    const remove = await s.call(door, "keys.removePermissions", {
      keyId: k.keyId,
      permissions: [`${p}.a`],
    });
    expect(slugs(remove.data)).toEqual([`${p}.b`, `${p}.c`]);
    const set = await s.call(door, "keys.setPermissions", {
      keyId: k.keyId,
      permissions: [`${p}.z`],
    });
    expect(slugs(set.data)).toEqual([`${p}.z`]);
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId })).data.permissions).toEqual([
      `${p}.z`,
    ]);
    const cleared = await s.call(door, "keys.setPermissions", { keyId: k.keyId, permissions: [] });
    expect(cleared.data).toEqual([]);
  });

  it("answers removing an unknown permission with 404 naming it, changing nothing", async () => {
    const k = await s.seed.key({ permissions: [`kp${++n}.keep`] });
    const before = await s.snapshot();
    const res = await s.call(door, "keys.removePermissions", {
      keyId: k.keyId,
      permissions: ["no.such.perm"],
    });
    expect(res.status).toBe(404);
    expect(res.error?.code).toBe("err:svc:data:permission_not_found");
    expect(res.error?.detail).toContain("no.such.perm");
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs update_key and add_permission_to_key, plus create_permission to create", async () => {
    const existing = `kp${++n}.exists`;
    await s.seed.permission(existing);
    const k = await s.seed.key();
    const updater = await s.seed.rootKey(["api.*.update_key"]);
    const a = await s.call(
      door,
      "keys.addPermissions",
      { keyId: k.keyId, permissions: [existing] },
      updater,
    );
    expect(a.error?.detail).toContain("rbac.*.add_permission_to_key");
    const adder = await s.seed.rootKey(["api.*.update_key", "rbac.*.add_permission_to_key"]);
    expect(
      (
        await s.call(
          door,
          "keys.addPermissions",
          { keyId: k.keyId, permissions: [existing] },
          adder,
        )
      ).status,
    ).toBe(200);
    const b = await s.call(
      door,
      "keys.addPermissions",
      { keyId: k.keyId, permissions: [`kp${n}.new`] },
      adder,
    );
    expect(b.error?.detail).toContain("rbac.*.create_permission");
    const c = await s.call(
      door,
      "keys.removePermissions",
      { keyId: k.keyId, permissions: [existing] },
      adder,
    );
    expect(c.error?.detail).toContain("rbac.*.remove_permission_from_key");
  });
});

describe.each(DOORS)("key roles via %s", (door) => {
  it("adds, removes and sets roles, answered with their permissions", async () => {
    const [a, b] = [`kr${++n}_a`, `kr${n}_b`];
    await s.call("json", "permissions.createRole", { name: a, permissions: [`${a}.read`] });
    await s.call("json", "permissions.createRole", { name: b });
    const k = await s.seed.key();
    const add = await s.call(door, "keys.addRoles", { keyId: k.keyId, roles: [b, a, a] });
    expect(roleNames(add.data)).toEqual([a, b]);
    expect(slugs(add.data[0].permissions)).toEqual([`${a}.read`]);
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId })).data.permissions).toEqual([
      `${a}.read`,
    ]);
    const remove = await s.call(door, "keys.removeRoles", { keyId: k.keyId, roles: [a] });
    expect(roleNames(remove.data)).toEqual([b]);
    const set = await s.call(door, "keys.setRoles", { keyId: k.keyId, roles: [a] });
    expect(roleNames(set.data)).toEqual([a]);
    expect((await s.call(door, "keys.setRoles", { keyId: k.keyId, roles: [] })).data).toEqual([]);
  });

  it("answers an unknown role with 404 and changes nothing; addRoles needs add_role_to_key", async () => {
    const k = await s.seed.key();
    const before = await s.snapshot();
    for (const proc of ["keys.addRoles", "keys.removeRoles", "keys.setRoles"]) {
      const res = await s.call(door, proc, { keyId: k.keyId, roles: ["ghost_role"] });
      expect(res.status).toBe(404);
      expect(res.error?.code).toBe("err:svc:data:role_not_found");
    }
    expect(await s.changesSince(before)).toEqual({});
    const updater = await s.seed.rootKey(["api.*.update_key"]);
    const res = await s.call(
      door,
      "keys.addRoles",
      { keyId: k.keyId, roles: ["ghost_role"] },
      updater,
    );
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain("rbac.*.add_role_to_key");
  });
});

describe("deleting a permission or a role removes it from keys", () => {
  it("drops the links and the key's permissions follow", async () => {
    const role = `del_link_${++n}`;
    await s.call("json", "permissions.createRole", {
      name: role,
      permissions: [`${role}.via_role`],
    });
    const k = await s.seed.key({ roles: [role], permissions: [`${role}.direct`] });
    expect((await s.call("json", "keys.getKey", { keyId: k.keyId })).data.permissions).toEqual([
      `${role}.direct`,
      `${role}.via_role`,
    ]);
    await s.call("json", "permissions.deletePermission", { permission: `${role}.direct` });
    await s.call("json", "permissions.deleteRole", { role });
    const after = (await s.call("json", "keys.getKey", { keyId: k.keyId })).data;
    expect(after.permissions).toBeUndefined();
    expect(after.roles).toBeUndefined();
  });
});

describe("whatever createRole and createPermission accept can be granted to a key", () => {
  it("grants edge-of-bounds names and slugs through createKey and updateKey", async () => {
    const roles = ["r", "R".repeat(100), "a:b-c.d_e*f"];
    const perms = ["abc", "p".repeat(100), "documents.*", "x:y-z.w_v*"];
    for (const name of roles)
      expect((await s.call("json", "permissions.createRole", { name })).status).toBe(200);
    for (const slug of perms)
      expect(
        (await s.call("json", "permissions.createPermission", { name: slug, slug })).status,
      ).toBe(200);
    const k = await s.seed.key({ roles, permissions: perms });
    const rec = (await s.call("json", "keys.getKey", { keyId: k.keyId })).data;
    expect(rec.roles).toEqual([...roles].sort());
    expect(rec.permissions).toEqual([...perms].sort());
    expect(
      (await s.call("grpc", "keys.updateKey", { keyId: k.keyId, roles, permissions: perms }))
        .status,
    ).toBe(200);
  });
});
