import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.createRole: creates a role of the caller's workspace under a unique name, with
// permissions given by slug, creating the missing ones. Attaching permissions needs
// rbac.*.add_permission_to_role and creating them rbac.*.create_permission, besides
// rbac.*.create_role. Audited as role.create, permission.create and one
// authorization.connect_role_and_permission per link.

const s = useServer();
let n = 0;
const name = () => `role_${++n}`;

describe("permissions.createRole", () => {
  it("creates a role, creating missing permissions, de-duplicated and sorted", async () => {
    await s.seed.permission("docs.read");
    const r = name();
    const res = await s.api.permissions.createRole({
      name: r,
      description: "Reads and writes",
      permissions: ["docs.write", "docs.read", "docs.write"],
    });
    const roleId = res.data?.roleId as string;
    expect(roleId).toMatch(/^role_/);
    const got = await s.api.permissions.getRole({ role: r });
    expect(got.data).toMatchObject({ id: roleId, name: r, description: "Reads and writes" });
    expect(got.data?.permissions.map((p) => p.slug)).toEqual(["docs.read", "docs.write"]);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by event",
      [res.meta?.requestId],
    );
    expect(audit.map((a) => a.event)).toEqual([
      "authorization.connect_role_and_permission",
      "authorization.connect_role_and_permission",
      "permission.create",
      "role.create",
    ]);
  });

  it("answers a taken name with 409 and writes nothing", async () => {
    const r = name();
    await s.api.permissions.createRole({ name: r });
    const before = await s.snapshot();
    const again = await refusal(
      s.api.permissions.createRole({ name: r, permissions: ["brand.new.one"] }),
    );
    expect(again.code).toBe(Code.AlreadyExists);
    expect(again).toMatchObject({ status: 409, errorCode: "err:svc:data:role_already_exists" });
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
    const r = await refusal(s.api.permissions.createRole(body));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe(location);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs add_permission_to_role to attach permissions and create_permission to create them", async () => {
    await s.seed.permission("exists.already");
    const roleOnly = s.as(await s.seed.rootKey(["rbac.*.create_role"]));
    expect((await roleOnly.permissions.createRole({ name: name() })).data?.roleId).toMatch(
      /^role_/,
    );
    const attach = await refusal(
      roleOnly.permissions.createRole({ name: name(), permissions: ["exists.already"] }),
    );
    expect(attach.code).toBe(Code.PermissionDenied);
    expect(attach.detail).toContain("rbac.*.add_permission_to_role");
    const attacher = s.as(
      await s.seed.rootKey(["rbac.*.create_role", "rbac.*.add_permission_to_role"]),
    );
    const attached = await attacher.permissions.createRole({
      name: name(),
      permissions: ["exists.already"],
    });
    expect(attached.data?.roleId).toMatch(/^role_/);
    const before = await s.snapshot();
    const create = await refusal(
      attacher.permissions.createRole({ name: name(), permissions: ["not.there.yet"] }),
    );
    expect(create.status).toBe(403);
    expect(create.detail).toContain("rbac.*.create_permission");
    expect(await s.changesSince(before)).toEqual({});
  });
});
