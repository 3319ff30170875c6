import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// permissions.getRole: one role of the caller's workspace, named by id or name, with its
// permissions; 404 for a missing one comes before the check of rbac.*.read_role.

const s = useServer();

describe("permissions.getRole", () => {
  it("finds a role by id and by name, with its permissions", async () => {
    const made = await s.api.permissions.createRole({ name: "getter", permissions: ["g.read"] });
    const id = made.data?.roleId as string;
    for (const role of [id, "getter"]) {
      const res = await s.api.permissions.getRole({ role });
      expect(res.data).toMatchObject({ id, name: "getter" });
      expect(res.data?.description).toBeUndefined();
      expect(res.data?.permissions.map((p) => p.slug)).toEqual(["g.read"]);
    }
  });

  it("answers unknown, deleted and foreign roles with 404", async () => {
    await s.api.permissions.createRole({ name: "gone" });
    await s.api.permissions.deleteRole({ role: "gone" });
    const foreign = s.as(await s.seed.rootKey(["*.*.*"], await s.seed.workspace()));
    const theirs = await foreign.permissions.createRole({ name: "theirs" });
    for (const role of ["no_role", "gone", theirs.data?.roleId as string]) {
      const r = await refusal(s.api.permissions.getRole({ role }));
      expect(r.code).toBe(Code.NotFound);
      expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
    }
  });

  it("needs rbac.*.read_role", async () => {
    await s.api.permissions.createRole({ name: "hidden" });
    const creator = s.as(await s.seed.rootKey(["rbac.*.create_role"]));
    const r = await refusal(creator.permissions.getRole({ role: "hidden" }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.read_role");
  });
});
