import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.removePermissions: takes direct permissions from a key (each must exist) and answers
// the key's direct permissions after the change.

const s = useServer();
let n = 0;
const slugs = (xs: { slug: string }[]) => xs.map((x) => x.slug);

describe("keys.removePermissions", () => {
  it("removes direct permissions, answered with those left", async () => {
    const p = `kp${++n}`;
    const { keyId } = await issueKey(s, { permissions: [`${p}.a`, `${p}.b`, `${p}.c`] });
    const { data } = await s.api.keys.removePermissions({ keyId, permissions: [`${p}.a`] });
    expect(slugs(data)).toEqual([`${p}.b`, `${p}.c`]);
    const key = (await s.api.keys.getKey({ keyId })).data;
    expect(key?.permissions).toEqual([`${p}.b`, `${p}.c`]);
  });

  it("answers an unknown permission with 404 naming it, changing nothing", async () => {
    const { keyId } = await issueKey(s, { permissions: [`kp${++n}.keep`] });
    const before = await s.snapshot();
    const r = await refusal(s.api.keys.removePermissions({ keyId, permissions: ["no.such.perm"] }));
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:permission_not_found" });
    expect(r.detail).toContain("no.such.perm");
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs rbac.*.remove_permission_from_key beyond update_key and the grant to add", async () => {
    const held = `kp${++n}.held`;
    const { keyId } = await issueKey(s, { permissions: [held] });
    const adder = s.as(await s.seed.rootKey(["api.*.update_key", "rbac.*.add_permission_to_key"]));
    const r = await refusal(adder.keys.removePermissions({ keyId, permissions: [held] }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain("rbac.*.remove_permission_from_key");
  });
});
