import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;
const slug = (door: string) => `docs.${door.replace("-", "_")}.p${++n}`;

describe.each(DOORS)("permissions.createPermission via %s", (door) => {
  it("creates a permission that getPermission finds by id and by slug", async () => {
    const sl = slug(door);
    const res = await s.call(door, "permissions.createPermission", {
      name: "read:docs",
      slug: sl,
      description: "Read documents",
    });
    expect(res.status).toBe(200);
    expect(res.data.permissionId).toMatch(/^perm_/);
    const expected = {
      id: res.data.permissionId,
      name: "read:docs",
      slug: sl,
      description: "Read documents",
    };
    expect(
      (await s.call(door, "permissions.getPermission", { permission: res.data.permissionId })).data,
    ).toEqual(expected);
    expect((await s.call(door, "permissions.getPermission", { permission: sl })).data).toEqual(
      expected,
    );
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1",
      [res.requestId],
    );
    expect(audit).toEqual([{ event: "permission.create" }]);
  });

  it("answers a taken slug with 409 and writes nothing", async () => {
    const sl = slug(door);
    await s.call(door, "permissions.createPermission", { name: "first", slug: sl });
    const before = await s.snapshot();
    const res = await s.call(door, "permissions.createPermission", { name: "second", slug: sl });
    expect(res.status).toBe(409);
    expect(res.error?.code).toBe("err:svc:data:permission_already_exists");
    expect(await s.changesSince(before)).toEqual({});
  });

  it.each([
    ["a slug of 2 characters", { name: "abc", slug: "ab" }, "/slug"],
    ["a slug of 101 characters", { name: "abc", slug: "s".repeat(101) }, "/slug"],
    ["a slug with a space", { name: "abc", slug: "a b c" }, "/slug"],
    ["a slug with a slash", { name: "abc", slug: "a/b/c" }, "/slug"],
    ["a name with a space", { name: "a b c", slug: "abc" }, "/name"],
    ["no slug", { name: "abc" }, "/slug"],
    [
      "a description of 513 characters",
      { name: "abc", slug: "abc.def", description: "d".repeat(513) },
      "/description",
    ],
  ])("rejects %s with 400", async (_, body, location) => {
    const before = await s.snapshot();
    const res = await s.call(door, "permissions.createPermission", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]?.location).toBe(location);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs rbac.*.create_permission", async () => {
    const key = await s.seed.rootKey(["rbac.*.read_permission"]);
    const res = await s.call(
      door,
      "permissions.createPermission",
      { name: "abc", slug: slug(door) },
      key,
    );
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain("rbac.*.create_permission");
  });
});

describe.each(DOORS)(
  "permissions.getPermission / listPermissions / deletePermission via %s",
  (door) => {
    it("answers unknown, deleted and foreign permissions with 404", async () => {
      const sl = slug(door);
      await s.seed.permission(sl);
      expect((await s.call(door, "permissions.deletePermission", { permission: sl })).status).toBe(
        200,
      );
      const foreign = await s.seed.permission("foreign.perm", await s.seed.workspace());
      for (const permission of ["nope.nope", sl, foreign]) {
        const res = await s.call(door, "permissions.getPermission", { permission });
        expect(res.status).toBe(404);
        expect(res.error?.code).toBe("err:svc:data:permission_not_found");
        expect((await s.call(door, "permissions.deletePermission", { permission })).status).toBe(
          404,
        );
      }
    });

    it("lists permissions by id with pagination and search", async () => {
      const ws = await s.seed.workspace();
      const key = await s.seed.rootKey(["rbac.*.read_permission"], ws);
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await s.seed.permission(`list.item${i}`, ws));
      ids.sort();
      const first = await s.call(door, "permissions.listPermissions", { limit: 3 }, key);
      expect(first.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 3));
      expect(first.pagination).toEqual({ cursor: ids[3], hasMore: true });
      const second = await s.call(
        door,
        "permissions.listPermissions",
        { limit: 3, cursor: first.pagination?.cursor },
        key,
      );
      expect(second.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(3));
      expect(second.pagination).toEqual({ hasMore: false });
      const found = await s.call(door, "permissions.listPermissions", { search: "ITEM3" }, key);
      expect(found.data.map((p: { slug: string }) => p.slug)).toEqual(["list.item3"]);
    });

    it("deleting a permission removes it from roles", async () => {
      const sl = slug(door);
      const role = await s.call(door, "permissions.createRole", {
        name: `r${++n}`,
        permissions: [sl, "other.keep"],
      });
      const res = await s.call(door, "permissions.deletePermission", { permission: sl });
      expect(res.status).toBe(200);
      expect(res.data).toEqual({});
      const got = await s.call(door, "permissions.getRole", { role: role.data.roleId });
      expect(got.data.permissions.map((p: { slug: string }) => p.slug)).toEqual(["other.keep"]);
    });

    it("needs rbac.*.read_permission to read and rbac.*.delete_permission to delete", async () => {
      const sl = slug(door);
      await s.seed.permission(sl);
      const key = await s.seed.rootKey(["rbac.*.create_permission"]);
      expect(
        (await s.call(door, "permissions.getPermission", { permission: sl }, key)).status,
      ).toBe(403);
      expect((await s.call(door, "permissions.listPermissions", {}, key)).status).toBe(403);
      const del = await s.call(door, "permissions.deletePermission", { permission: sl }, key);
      expect(del.status).toBe(403);
      expect(del.error?.detail).toContain("rbac.*.delete_permission");
    });
  },
);
