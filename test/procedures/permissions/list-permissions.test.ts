import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.listPermissions: one page of the caller's workspace's permissions, by id,
// optionally searched; needs rbac.*.read_permission.

const s = useServer();

describe("permissions.listPermissions", () => {
  it("lists permissions by id with pagination and search", async () => {
    const ws = await s.seed.workspace();
    const reader = s.as(await s.seed.rootKey(["rbac.*.read_permission"], ws));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await s.seed.permission(`list.item${i}`, ws));
    ids.sort();
    const first = await reader.permissions.listPermissions({ limit: 3 });
    expect(first.data.map((p) => p.id)).toEqual(ids.slice(0, 3));
    expect(first.pagination).toMatchObject({ cursor: ids[3], hasMore: true });
    const second = await reader.permissions.listPermissions({
      limit: 3,
      cursor: first.pagination?.cursor,
    });
    expect(second.data.map((p) => p.id)).toEqual(ids.slice(3));
    expect(second.pagination?.hasMore).toBe(false);
    expect(second.pagination?.cursor).toBeUndefined();
    const found = await reader.permissions.listPermissions({ search: "ITEM3" });
    expect(found.data.map((p) => p.slug)).toEqual(["list.item3"]);
  });

  it("needs rbac.*.read_permission", async () => {
    const creator = s.as(await s.seed.rootKey(["rbac.*.create_permission"]));
    const r = await refusal(creator.permissions.listPermissions({}));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.read_permission");
  });
});
