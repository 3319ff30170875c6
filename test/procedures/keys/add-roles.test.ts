import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.addRoles: grants roles (each must exist) to a key and answers the key's roles after the
// change, with their permissions.

const s = useServer();
let n = 0;
const names = (xs: { name: string }[]) => xs.map((x) => x.name);

describe("keys.addRoles", () => {
  it("adds roles, answered sorted with their permissions; the key holds those permissions", async () => {
    const [a, b] = [`kr${++n}_a`, `kr${n}_b`];
    await s.api.permissions.createRole({ name: a, permissions: [`${a}.read`] });
    await s.api.permissions.createRole({ name: b });
    const { keyId } = await issueKey(s);
    const { data } = await s.api.keys.addRoles({ keyId, roles: [b, a, a] });
    expect(names(data)).toEqual([a, b]);
    expect(data[0]?.permissions.map((p) => p.slug)).toEqual([`${a}.read`]);
    const key = (await s.api.keys.getKey({ keyId })).data;
    expect(key?.roles).toEqual([a, b]);
    expect(key?.permissions).toEqual([`${a}.read`]);
  });

  it("answers an unknown role with 404 role_not_found, changing nothing", async () => {
    const { keyId } = await issueKey(s);
    const before = await s.snapshot();
    const r = await refusal(s.api.keys.addRoles({ keyId, roles: ["ghost_role"] }));
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs rbac.*.add_role_to_key beyond update_key", async () => {
    const { keyId } = await issueKey(s);
    const updater = s.as(await s.seed.rootKey(["api.*.update_key"]));
    const r = await refusal(updater.keys.addRoles({ keyId, roles: ["ghost_role"] }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.add_role_to_key");
  });
});
