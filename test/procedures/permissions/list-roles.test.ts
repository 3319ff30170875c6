import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.listRoles: one page of the caller's workspace's roles, by id, each with its
// permissions, optionally searched by name; needs rbac.*.read_role.

const s = useServer();

describe("permissions.listRoles", () => {
  it("lists roles with their permissions, by id, with pagination and search", async () => {
    const ws = await s.seed.workspace();
    const rbac = s.as(await s.seed.rootKey(["rbac.*.*"], ws)).permissions;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await rbac.createRole({ name: `lr${i}`, permissions: [`p.r${i}`] });
      ids.push(res.data?.roleId as string);
    }
    ids.sort();
    const page = await rbac.listRoles({ limit: 2 });
    expect(page.data.map((r) => r.id)).toEqual(ids.slice(0, 2));
    expect(page.data[0]?.permissions).toHaveLength(1);
    expect(page.pagination).toMatchObject({ cursor: ids[2], hasMore: true });
    const rest = await rbac.listRoles({ limit: 2, cursor: page.pagination?.cursor });
    expect(rest.data.map((r) => r.id)).toEqual(ids.slice(2));
    expect(rest.pagination?.hasMore).toBe(false);
    const found = await rbac.listRoles({ search: "LR1" });
    expect(found.data.map((r) => r.name)).toEqual(["lr1"]);
  });

  it("needs rbac.*.read_role", async () => {
    const creator = s.as(await s.seed.rootKey(["rbac.*.create_role"]));
    const r = await refusal(creator.permissions.listRoles({}));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.read_role");
  });
});
