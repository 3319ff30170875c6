import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;
const name = () => `role_${++n}`;
const slugsOf = (ps: { slug: string }[] | undefined) => (ps ?? []).map((p) => p.slug);

describe.each(DOORS)("permissions.createRole via %s", (door) => {
  it("creates a role, creating missing permissions, de-duplicated and sorted", async () => {
    const p = `${door.replace("-", "_")}.docs`;
    await s.seed.permission(`${p}.read`);
    const r = name();
    const res = await s.call(door, "permissions.createRole", {
      name: r,
      description: "Reads and writes",
      permissions: [`${p}.write`, `${p}.read`, `${p}.write`],
    });
    expect(res.status).toBe(200);
    expect(res.data.roleId).toMatch(/^role_/);
    const got = await s.call(door, "permissions.getRole", { role: r });
    expect(got.data).toMatchObject({
      id: res.data.roleId,
      name: r,
      description: "Reads and writes",
    });
    expect(slugsOf(got.data.permissions)).toEqual([`${p}.read`, `${p}.write`]);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by event",
      [res.requestId],
    );
    const events = audit.map((a) => a.event);
    expect(events.filter((e) => e === "authorization.connect_role_and_permission")).toHaveLength(2);
    expect(events).toContain("role.create");
  });

  it("answers a taken name with 409 and writes nothing", async () => {
    const r = name();
    await s.call(door, "permissions.createRole", { name: r });
    const before = await s.snapshot();
    const res = await s.call(door, "permissions.createRole", {
      name: r,
      permissions: ["brand.new.one"],
    });
    expect(res.status).toBe(409);
    expect(res.error?.code).toBe("err:svc:data:role_already_exists");
    expect(await s.changesSince(before)).toEqual({});
  });

  it.each([
    ["an empty name", { name: "" }, "/name"],
    ["a name of 101 characters", { name: "r".repeat(101) }, "/name"],
    ["a name with a space", { name: "my role" }, "/name"],
    [
      "a permission slug of 2 characters",
      { name: "okname", permissions: ["ab"] },
      "/permissions/0",
    ],
    [
      "a permission slug with a comma",
      { name: "okname", permissions: ["docs.read", "a,b,c"] },
      "/permissions/1",
    ],
    [
      "1001 permissions",
      { name: "okname", permissions: Array.from({ length: 1001 }, (_, i) => `p.n${i}`) },
      "/permissions",
    ],
  ])("rejects %s with 400 and writes nothing", async (_, body, location) => {
    const before = await s.snapshot();
    const res = await s.call(door, "permissions.createRole", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]?.location).toBe(location);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs add_permission_to_role to attach permissions and create_permission to create them", async () => {
    const exists = `exists.${door.replace("-", "_")}`;
    await s.seed.permission(exists);
    const roleOnly = await s.seed.rootKey(["rbac.*.create_role"]);
    expect((await s.call(door, "permissions.createRole", { name: name() }, roleOnly)).status).toBe(
      200,
    );
    const attach = await s.call(
      door,
      "permissions.createRole",
      { name: name(), permissions: [exists] },
      roleOnly,
    );
    expect(attach.status).toBe(403);
    expect(attach.error?.detail).toContain("rbac.*.add_permission_to_role");
    const attacher = await s.seed.rootKey(["rbac.*.create_role", "rbac.*.add_permission_to_role"]);
    expect(
      (
        await s.call(
          door,
          "permissions.createRole",
          { name: name(), permissions: [exists] },
          attacher,
        )
      ).status,
    ).toBe(200);
    const create = await s.call(
      door,
      "permissions.createRole",
      { name: name(), permissions: ["not.there.yet"] },
      attacher,
    );
    expect(create.status).toBe(403);
    expect(create.error?.detail).toContain("rbac.*.create_permission");
  });
});

describe.each(DOORS)("permissions.getRole / listRoles / deleteRole via %s", (door) => {
  it("answers unknown, deleted and foreign roles with 404", async () => {
    const r = name();
    await s.call(door, "permissions.createRole", { name: r });
    expect((await s.call(door, "permissions.deleteRole", { role: r })).status).toBe(200);
    const foreignKey = await s.seed.rootKey(["*.*.*"], await s.seed.workspace());
    const foreign = await s.call(door, "permissions.createRole", { name: name() }, foreignKey);
    for (const role of ["no_role", r, foreign.data.roleId]) {
      const res = await s.call(door, "permissions.getRole", { role });
      expect(res.status).toBe(404);
      expect(res.error?.code).toBe("err:svc:data:role_not_found");
      expect((await s.call(door, "permissions.deleteRole", { role })).status).toBe(404);
    }
  });

  it("lists roles with their permissions, by id, with pagination", async () => {
    const ws = await s.seed.workspace();
    const key = await s.seed.rootKey(["rbac.*.*"], ws);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await s.call(
        door,
        "permissions.createRole",
        { name: `lr${i}`, permissions: [`p.r${i}`] },
        key,
      );
      ids.push(res.data.roleId);
    }
    ids.sort();
    const page = await s.call(door, "permissions.listRoles", { limit: 2 }, key);
    expect(page.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(0, 2));
    expect(page.data[0].permissions).toHaveLength(1);
    expect(page.pagination).toEqual({ cursor: ids[2], hasMore: true });
    const found = await s.call(door, "permissions.listRoles", { search: "LR1" }, key);
    expect(found.data.map((r: { name: string }) => r.name)).toEqual(["lr1"]);
  });

  it("deleting a role keeps its permissions", async () => {
    const r = name();
    await s.call(door, "permissions.createRole", { name: r, permissions: ["kept.after.role"] });
    const res = await s.call(door, "permissions.deleteRole", { role: r });
    expect(res.data).toEqual({});
    expect(
      (await s.call(door, "permissions.getPermission", { permission: "kept.after.role" })).status,
    ).toBe(200);
  });

  it("needs rbac.*.read_role and rbac.*.delete_role", async () => {
    const r = name();
    await s.call(door, "permissions.createRole", { name: r });
    const key = await s.seed.rootKey(["rbac.*.create_role"]);
    expect((await s.call(door, "permissions.getRole", { role: r }, key)).error?.detail).toContain(
      "rbac.*.read_role",
    );
    expect((await s.call(door, "permissions.listRoles", {}, key)).status).toBe(403);
    expect(
      (await s.call(door, "permissions.deleteRole", { role: r }, key)).error?.detail,
    ).toContain("rbac.*.delete_role");
  });
});

describe.each(DOORS)("permissions.setRolePermissions via %s", (door) => {
  it("replaces the permissions, answers them sorted, and is a no-op when repeated", async () => {
    const d = door.replace("-", "_");
    const role = await s.call(door, "permissions.createRole", {
      name: name(),
      permissions: [`${d}.a.one`, `${d}.b.two`],
    });
    const roleId = role.data.roleId;
    const res = await s.call(door, "permissions.setRolePermissions", {
      roleId,
      permissions: [`${d}.c.three`, `${d}.b.two`, `${d}.c.three`],
    });
    expect(res.status).toBe(200);
    expect(slugsOf(res.data)).toEqual([`${d}.b.two`, `${d}.c.three`]);
    expect(
      slugsOf((await s.call(door, "permissions.getRole", { role: roleId })).data.permissions),
    ).toEqual([`${d}.b.two`, `${d}.c.three`]);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by event",
      [res.requestId],
    );
    expect(audit.map((a) => a.event)).toEqual([
      "authorization.connect_role_and_permission",
      "authorization.disconnect_role_and_permissions",
      "permission.create",
    ]);
    const before = await s.snapshot();
    const again = await s.call(door, "permissions.setRolePermissions", {
      roleId,
      permissions: [`${d}.b.two`, `${d}.c.three`],
    });
    expect(slugsOf(again.data)).toEqual([`${d}.b.two`, `${d}.c.three`]);
    expect(await s.changesSince(before)).toEqual({});
    const cleared = await s.call(door, "permissions.setRolePermissions", {
      roleId,
      permissions: [],
    });
    expect(cleared.data).toEqual([]);
  });

  it("answers an unknown role with 404 and needs both add and remove grants", async () => {
    expect(
      (
        await s.call(door, "permissions.setRolePermissions", {
          roleId: "role_nope",
          permissions: [],
        })
      ).status,
    ).toBe(404);
    const role = await s.call(door, "permissions.createRole", { name: name() });
    const key = await s.seed.rootKey(["rbac.*.add_permission_to_role"]);
    const res = await s.call(
      door,
      "permissions.setRolePermissions",
      { roleId: role.data.roleId, permissions: [] },
      key,
    );
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain("rbac.*.remove_permission_from_role");
  });
});
