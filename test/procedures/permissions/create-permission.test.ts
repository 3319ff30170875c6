import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.createPermission: creates a permission of the caller's workspace under a slug
// unique in that workspace, audited as permission.create.

const s = useServer();
let n = 0;
const slug = () => `docs.create.p${++n}`;

describe("permissions.createPermission", () => {
  it("creates a permission that getPermission finds by id and by slug, audited", async () => {
    const sl = slug();
    const res = await s.api.permissions.createPermission({
      name: "read:docs",
      slug: sl,
      description: "Read documents",
    });
    const permissionId = res.data?.permissionId as string;
    expect(permissionId).toMatch(/^perm_/);
    const expected = {
      id: permissionId,
      name: "read:docs",
      slug: sl,
      description: "Read documents",
    };
    for (const permission of [permissionId, sl]) {
      expect((await s.api.permissions.getPermission({ permission })).data).toMatchObject(expected);
    }
    const audit = await s.db.query("select event from audit_logs where request_id = $1", [
      res.meta?.requestId,
    ]);
    expect(audit).toEqual([{ event: "permission.create" }]);
  });

  it("answers a taken slug with 409 and writes nothing", async () => {
    const sl = slug();
    await s.api.permissions.createPermission({ name: "first", slug: sl });
    const before = await s.snapshot();
    const r = await refusal(s.api.permissions.createPermission({ name: "second", slug: sl }));
    expect(r.code).toBe(Code.AlreadyExists);
    expect(r).toMatchObject({ status: 409, errorCode: "err:svc:data:permission_already_exists" });
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
  ])("rejects %s with 400 and writes nothing", async (_, body, location) => {
    const before = await s.snapshot();
    const r = await refusal(s.api.permissions.createPermission(body));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe(location);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs rbac.*.create_permission", async () => {
    const reader = s.as(await s.seed.rootKey(["rbac.*.read_permission"]));
    const before = await s.snapshot();
    const r = await refusal(reader.permissions.createPermission({ name: "abc", slug: slug() }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.create_permission");
    expect(await s.changesSince(before)).toEqual({});
  });
});
