import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.setRoles: replaces the roles of a key (each must exist) and answers them.

const s = useServer();
let n = 0;
const names = (xs: { name: string }[]) => xs.map((x) => x.name);

describe("keys.setRoles", () => {
  it("replaces the roles, and an empty list removes them all", async () => {
    const [a, b] = [`kr${++n}_a`, `kr${n}_b`];
    await s.api.permissions.createRole({ name: a });
    await s.api.permissions.createRole({ name: b });
    const { keyId } = await issueKey(s, { roles: [b] });
    const set = await s.api.keys.setRoles({ keyId, roles: [a] });
    expect(names(set.data)).toEqual([a]);
    expect((await s.api.keys.getKey({ keyId })).data?.roles).toEqual([a]);
    expect((await s.api.keys.setRoles({ keyId, roles: [] })).data).toEqual([]);
    expect((await s.api.keys.getKey({ keyId })).data?.roles).toEqual([]);
  });

  it("answers an unknown role with 404 role_not_found, changing nothing", async () => {
    const { keyId } = await issueKey(s);
    const before = await s.snapshot();
    const r = await refusal(s.api.keys.setRoles({ keyId, roles: ["ghost_role"] }));
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs rbac.*.remove_role_from_key beside the grant to add", async () => {
    const { keyId } = await issueKey(s);
    const adder = s.as(await s.seed.rootKey(["api.*.update_key", "rbac.*.add_role_to_key"]));
    const r = await refusal(adder.keys.setRoles({ keyId, roles: ["ghost_role"] }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.remove_role_from_key");
  });
});
