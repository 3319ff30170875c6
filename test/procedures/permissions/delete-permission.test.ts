import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.deletePermission: deletes a permission of the caller's workspace, named by id or
// slug, with its links to roles and keys, audited as permission.delete.

const s = useServer();

describe("permissions.deletePermission", () => {
  it("deletes the permission and removes it from roles, audited", async () => {
    const role = await s.api.permissions.createRole({
      name: "reader",
      permissions: ["docs.del.read", "other.keep"],
    });
    const res = await s.api.permissions.deletePermission({ permission: "docs.del.read" });
    expect(res.data?.$typeName).toBe("latchkey.v2.DeletePermissionResponseData");
    const got = await s.api.permissions.getRole({ role: role.data?.roleId });
    expect(got.data?.permissions.map((p) => p.slug)).toEqual(["other.keep"]);
    const audit = await s.db.query("select event from audit_logs where request_id = $1", [
      res.meta?.requestId,
    ]);
    expect(audit).toEqual([{ event: "permission.delete" }]);
  });

  it("answers unknown, deleted and foreign permissions with 404, writing nothing", async () => {
    const id = await s.seed.permission("docs.del.twice");
    await s.api.permissions.deletePermission({ permission: id });
    const foreign = await s.seed.permission("foreign.perm", await s.seed.workspace());
    const before = await s.snapshot();
    for (const permission of ["nope.nope", "docs.del.twice", id, foreign]) {
      const r = await refusal(s.api.permissions.deletePermission({ permission }));
      expect(r.code).toBe(Code.NotFound);
      expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:permission_not_found" });
    }
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs rbac.*.delete_permission and keeps the permission", async () => {
    await s.seed.permission("docs.del.kept");
    const creator = s.as(await s.seed.rootKey(["rbac.*.create_permission"]));
    const before = await s.snapshot();
    const r = await refusal(creator.permissions.deletePermission({ permission: "docs.del.kept" }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.delete_permission");
    expect(await s.changesSince(before)).toEqual({});
  });
});
