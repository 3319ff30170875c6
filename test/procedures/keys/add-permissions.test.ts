import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.addPermissions: grants permissions to a key directly, creating the missing ones, and
// answers the key's direct permissions after the change.

const s = useServer();
let n = 0;
const slugs = (xs: { slug: string }[]) => xs.map((x) => x.slug);

describe("keys.addPermissions", () => {
  it("adds, creating missing ones, answered sorted and without duplicates", async () => {
    const p = `kp${++n}`;
    const { keyId } = await issueKey(s, { permissions: [`${p}.a`] });
    const { data } = await s.api.keys.addPermissions({
      keyId,
      permissions: [`${p}.c`, `${p}.b`, `${p}.a`, `${p}.b`],
    });
    expect(slugs(data)).toEqual([`${p}.a`, `${p}.b`, `${p}.c`]);
    expect(data.map((d) => d.id)).toEqual(data.map(() => expect.stringMatching(/^perm_/)));
    const key = (await s.api.keys.getKey({ keyId })).data;
    expect(key?.permissions).toEqual([`${p}.a`, `${p}.b`, `${p}.c`]);
  });

  it("needs update_key and add_permission_to_key, plus create_permission to create", async () => {
    const existing = `kp${++n}.exists`;
    await s.seed.permission(existing);
    const k = await issueKey(s);
    const updater = s.as(await s.seed.rootKey(["api.*.update_key"]));
    const a = await refusal(
      updater.keys.addPermissions({ keyId: k.keyId, permissions: [existing] }),
    );
    expect(a.status).toBe(403);
    expect(a.detail).toContain("rbac.*.add_permission_to_key");
    const adder = s.as(await s.seed.rootKey(["api.*.update_key", "rbac.*.add_permission_to_key"]));
    const added = await adder.keys.addPermissions({ keyId: k.keyId, permissions: [existing] });
    expect(slugs(added.data)).toEqual([existing]);
    const before = await s.snapshot();
    const b = await refusal(
      adder.keys.addPermissions({ keyId: k.keyId, permissions: [`kp${n}.new`] }),
    );
    expect(b.status).toBe(403);
    expect(b.detail).toContain("rbac.*.create_permission");
    expect(await s.changesSince(before)).toEqual({});
  });
});
