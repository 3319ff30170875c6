import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { issueKey } from "./issue-key.js";

// The roles and permissions of keys across the procedures that grant them and those that
// define them: a deleted permission or role leaves the keys that held it, and whatever
// permissions.createRole and createPermission accept can be granted to a key.

const s = useServer();

describe("the grants of keys", () => {
  it("drop a deleted permission and a deleted role, the key's permissions following", async () => {
    const role = `del_link_${Date.now()}`;
    await s.api.permissions.createRole({ name: role, permissions: [`${role}.via_role`] });
    const { keyId } = await issueKey(s, { roles: [role], permissions: [`${role}.direct`] });
    const getKey = async () => (await s.api.keys.getKey({ keyId })).data;
    expect((await getKey())?.permissions).toEqual([`${role}.direct`, `${role}.via_role`]);
    await s.api.permissions.deletePermission({ permission: `${role}.direct` });
    await s.api.permissions.deleteRole({ role });
    const after = await getKey();
    expect(after?.permissions).toEqual([]);
    expect(after?.roles).toEqual([]);
  });

  it("take edge-of-bounds role names and slugs through keys.createKey and keys.updateKey", async () => {
    const roles = ["r", "R".repeat(100), "a:b-c.d_e*f"];
    const perms = ["abc", "p".repeat(100), "documents.*", "x:y-z.w_v*"];
    for (const name of roles) await s.api.permissions.createRole({ name });
    for (const slug of perms) await s.api.permissions.createPermission({ name: slug, slug });
    const { keyId } = await issueKey(s, { roles, permissions: perms });
    const key = (await s.api.keys.getKey({ keyId })).data;
    expect(key?.roles).toEqual([...roles].sort());
    expect(key?.permissions).toEqual([...perms].sort());
    await s.api.keys.updateKey({
      keyId,
      roles: [roles[0] as string],
      permissions: [perms[0] as string],
    });
    await s.api.keys.updateKey({ keyId, roles, permissions: perms });
    const updated = (await s.api.keys.getKey({ keyId })).data;
    expect(updated?.roles).toEqual([...roles].sort());
    expect(updated?.permissions).toEqual([...perms].sort());
  });
});
