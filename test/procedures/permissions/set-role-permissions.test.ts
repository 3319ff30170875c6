import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.setRolePermissions: replaces a role's permissions by the given slugs, creating
// the missing ones, and answers them sorted; [] removes all, and repeating a request changes
// nothing. Needs rbac.*.add_permission_to_role and rbac.*.remove_permission_from_role (and
// rbac.*.create_permission to create one). Whether an omitted list is refused rather than read
// as [] is the door's concern: test/server/presence-lists.test.ts.

const s = useServer();
let n = 0;
const slugsOf = (ps: { slug: string }[] | undefined) => (ps ?? []).map((p) => p.slug);

/** A new role holding these permissions; returns its id. */
async function roleWith(permissions: string[]) {
  const res = await s.api.permissions.createRole({ name: `role_${++n}`, permissions });
  return res.data?.roleId as string;
}

describe("permissions.setRolePermissions", () => {
  it("replaces the permissions, answers them sorted, and is a no-op when repeated", async () => {
    const roleId = await roleWith(["set.a.one", "set.b.two"]);
    const res = await s.api.permissions.setRolePermissions({
      roleId,
      permissions: ["set.c.three", "set.b.two", "set.c.three"],
    });
    expect(slugsOf(res.data)).toEqual(["set.b.two", "set.c.three"]);
    const got = await s.api.permissions.getRole({ role: roleId });
    expect(slugsOf(got.data?.permissions)).toEqual(["set.b.two", "set.c.three"]);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by event",
      [res.meta?.requestId],
    );
    expect(audit.map((a) => a.event)).toEqual([
      "authorization.connect_role_and_permission",
      "authorization.disconnect_role_and_permissions",
      "permission.create",
    ]);
    const before = await s.snapshot();
    const again = await s.api.permissions.setRolePermissions({
      roleId,
      permissions: ["set.b.two", "set.c.three"],
    });
    expect(slugsOf(again.data)).toEqual(["set.b.two", "set.c.three"]);
    expect(await s.changesSince(before)).toEqual({});
    const cleared = await s.api.permissions.setRolePermissions({ roleId, permissions: [] });
    expect(cleared.data).toEqual([]);
    expect(slugsOf((await s.api.permissions.getRole({ role: roleId })).data?.permissions)).toEqual(
      [],
    );
  });

  it("answers an unknown role with 404", async () => {
    const r = await refusal(
      s.api.permissions.setRolePermissions({ roleId: "role_nope", permissions: [] }),
    );
    expect(r.code).toBe(Code.NotFound);
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
  });

  it("needs the remove grant as well as the add grant", async () => {
    const roleId = await roleWith(["held.one"]);
    const adder = s.as(await s.seed.rootKey(["rbac.*.add_permission_to_role"]));
    const before = await s.snapshot();
    const r = await refusal(adder.permissions.setRolePermissions({ roleId, permissions: [] }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.remove_permission_from_role");
    expect(await s.changesSince(before)).toEqual({});
  });
});
