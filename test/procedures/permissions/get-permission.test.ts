import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.getPermission: one permission of the caller's workspace, named by id or slug;
// 404 for a missing one comes before the check of rbac.*.read_permission.

const s = useServer();

describe("permissions.getPermission", () => {
  it("finds a permission by id and by slug", async () => {
    const id = await s.seed.permission("docs.get.read");
    for (const permission of [id, "docs.get.read"]) {
      const res = await s.api.permissions.getPermission({ permission });
      expect(res.data).toMatchObject({ id, name: "docs.get.read", slug: "docs.get.read" });
      expect(res.data?.description).toBeUndefined();
    }
  });

  it("answers unknown, deleted and foreign permissions with 404", async () => {
    await s.seed.permission("docs.get.gone");
    await s.api.permissions.deletePermission({ permission: "docs.get.gone" });
    const foreign = await s.seed.permission("foreign.perm", await s.seed.workspace());
    for (const permission of ["nope.nope", "docs.get.gone", foreign]) {
      const r = await refusal(s.api.permissions.getPermission({ permission }));
      expect(r.code).toBe(Code.NotFound);
      expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:permission_not_found" });
    }
  });

  it("needs rbac.*.read_permission", async () => {
    await s.seed.permission("docs.get.secret");
    const creator = s.as(await s.seed.rootKey(["rbac.*.create_permission"]));
    const r = await refusal(creator.permissions.getPermission({ permission: "docs.get.secret" }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.read_permission");
  });
});
