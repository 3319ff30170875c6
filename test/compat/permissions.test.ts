import { Unkey } from "@unkey/api";
import * as errors from "@unkey/api/models/errors";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../harness/server.js";

const s = useServer();
let unkey: Unkey;
beforeAll(() => {
  unkey = new Unkey({ rootKey: s.rootKey, serverURL: s.url });
});

describe("@unkey/api 2.5.1 against Latchkey: permissions and roles", () => {
  it("creates, gets, lists and deletes permissions", async () => {
    const created = await unkey.permissions.createPermission({
      name: "documents.read",
      slug: "documents.read",
      description: "Read documents",
    });
    const got = await unkey.permissions.getPermission({ permission: "documents.read" });
    expect(got.data).toEqual({
      id: created.data.permissionId,
      name: "documents.read",
      slug: "documents.read",
      description: "Read documents",
    });
    const list = await unkey.permissions.listPermissions({});
    expect(list.result.data.map((p) => p.slug)).toContain("documents.read");
    await unkey.permissions.deletePermission({ permission: created.data.permissionId });
    const gone = await unkey.permissions
      .getPermission({ permission: "documents.read" })
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(errors.NotFoundErrorResponse);
  });

  it("creates, gets, lists, re-permissions and deletes roles", async () => {
    const created = await unkey.permissions.createRole({
      name: "editor",
      permissions: ["docs.read", "docs.write"],
    });
    const roleId = created.data.roleId;
    const got = await unkey.permissions.getRole({ role: "editor" });
    expect(got.data.permissions?.map((p) => p.slug)).toEqual(["docs.read", "docs.write"]);
    const list = await unkey.permissions.listRoles({});
    expect(list.result.data.map((r) => r.id)).toContain(roleId);
    const set = await unkey.permissions.setRolePermissions({ roleId, permissions: ["docs.read"] });
    expect(set.data.map((p) => p.slug)).toEqual(["docs.read"]);
    const dup = await unkey.permissions.createRole({ name: "editor" }).catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(errors.ConflictErrorResponse);
    await unkey.permissions.deleteRole({ role: roleId });
    const gone = await unkey.permissions.getRole({ role: roleId }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(errors.NotFoundErrorResponse);
  });
});
