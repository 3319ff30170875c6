import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.setPermissions: replaces the direct permissions of a key (creating the missing ones)
// and answers them.

const s = useServer();
let n = 0;
const slugs = (xs: { slug: string }[]) => xs.map((x) => x.slug);

describe("keys.setPermissions", () => {
  it("replaces the direct permissions, and an empty list removes them all", async () => {
    const p = `kp${++n}`;
    const { keyId } = await issueKey(s, { permissions: [`${p}.b`, `${p}.c`] });
    const set = await s.api.keys.setPermissions({ keyId, permissions: [`${p}.z`] });
    expect(slugs(set.data)).toEqual([`${p}.z`]);
    expect((await s.api.keys.getKey({ keyId })).data?.permissions).toEqual([`${p}.z`]);
    const cleared = await s.api.keys.setPermissions({ keyId, permissions: [] });
    expect(cleared.data).toEqual([]);
    expect((await s.api.keys.getKey({ keyId })).data?.permissions).toEqual([]);
  });

  it("needs rbac.*.remove_permission_from_key beside the grant to add", async () => {
    const held = `kp${++n}.held`;
    const { keyId } = await issueKey(s, { permissions: [held] });
    const adder = s.as(await s.seed.rootKey(["api.*.update_key", "rbac.*.add_permission_to_key"]));
    const r = await refusal(adder.keys.setPermissions({ keyId, permissions: [held] }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.remove_permission_from_key");
  });

  describe("on the /v2 JSON door", () => {
    it("accepts permissions: [] as the list that removes them all", async () => {
      const { keyId } = await issueKey(s, { permissions: [`kp${++n}.gone`] });
      expect((await s.call("json", "keys.setPermissions", { keyId, permissions: [] })).status).toBe(
        200,
      );
      expect((await s.api.keys.getKey({ keyId })).data?.permissions).toEqual([]);
    });
  });
});
