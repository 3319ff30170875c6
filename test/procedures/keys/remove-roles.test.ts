import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.removeRoles: takes roles (each must exist) from a key and answers the roles left.

const s = useServer();
let n = 0;
const names = (xs: { name: string }[]) => xs.map((x) => x.name);

describe("keys.removeRoles", () => {
  it("removes roles, answered with those left; their permissions go with them", async () => {
    const [a, b] = [`kr${++n}_a`, `kr${n}_b`];
    await s.api.permissions.createRole({ name: a, permissions: [`${a}.read`] });
    await s.api.permissions.createRole({ name: b });
    const { keyId } = await issueKey(s, { roles: [a, b] });
    const { data } = await s.api.keys.removeRoles({ keyId, roles: [a] });
    expect(names(data)).toEqual([b]);
    const key = (await s.api.keys.getKey({ keyId })).data;
    expect(key?.roles).toEqual([b]);
    expect(key?.permissions).toEqual([]);
  });

  it("answers an unknown role with 404 role_not_found, changing nothing", async () => {
    const { keyId } = await issueKey(s);
    const before = await s.snapshot();
    const r = await refusal(s.api.keys.removeRoles({ keyId, roles: ["ghost_role"] }));
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs rbac.*.remove_role_from_key beyond update_key", async () => {
    const { keyId } = await issueKey(s);
    const updater = s.as(await s.seed.rootKey(["api.*.update_key"]));
    const r = await refusal(updater.keys.removeRoles({ keyId, roles: ["ghost_role"] }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.remove_role_from_key");
  });
});
