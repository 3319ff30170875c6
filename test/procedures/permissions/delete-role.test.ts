import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.deleteRole: deletes a role of the caller's workspace, named by id or name, with
// its links to permissions and keys (the permissions stay), audited as role.delete.

const s = useServer();

describe("permissions.deleteRole", () => {
  it("deletes the role and keeps its permissions, audited", async () => {
    await s.api.permissions.createRole({ name: "short_lived", permissions: ["kept.after.role"] });
    const res = await s.api.permissions.deleteRole({ role: "short_lived" });
    expect(res.data?.$typeName).toBe("latchkey.v2.DeleteRoleResponseData");
    expect((await refusal(s.api.permissions.getRole({ role: "short_lived" }))).status).toBe(404);
    const kept = await s.api.permissions.getPermission({ permission: "kept.after.role" });
    expect(kept.data?.slug).toBe("kept.after.role");
    const audit = await s.db.query("select event from audit_logs where request_id = $1", [
      res.meta?.requestId,
    ]);
    expect(audit).toEqual([{ event: "role.delete" }]);
  });

  it("answers unknown, deleted and foreign roles with 404, writing nothing", async () => {
    const made = await s.api.permissions.createRole({ name: "twice" });
    await s.api.permissions.deleteRole({ role: "twice" });
    const foreign = s.as(await s.seed.rootKey(["*.*.*"], await s.seed.workspace()));
    const theirs = await foreign.permissions.createRole({ name: "theirs" });
    const before = await s.snapshot();
    for (const role of ["no_role", "twice", made.data?.roleId, theirs.data?.roleId]) {
      const r = await refusal(s.api.permissions.deleteRole({ role }));
      expect(r.code).toBe(Code.NotFound);
      expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
    }
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs rbac.*.delete_role and keeps the role", async () => {
    await s.api.permissions.createRole({ name: "guarded" });
    const creator = s.as(await s.seed.rootKey(["rbac.*.create_role"]));
    const before = await s.snapshot();
    const r = await refusal(creator.permissions.deleteRole({ role: "guarded" }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.delete_role");
    expect(await s.changesSince(before)).toEqual({});
  });
});
