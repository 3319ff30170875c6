import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.whoami: the record of the key whose secret is given, if it is a key of the caller's
// workspace, read fresh (not through the verification cache).

const s = useServer();

describe("keys.whoami", () => {
  it("returns the record of the key whose secret is given, disabled or not", async () => {
    const k = await issueKey(s, { name: "who", enabled: false });
    const { data } = await s.api.keys.whoami({ key: k.key });
    expect(data).toMatchObject({ keyId: k.keyId, name: "who", enabled: false });
  });

  it("answers an unknown secret, a deleted key and another workspace's key with 404", async () => {
    const deleted = await issueKey(s);
    await s.api.keys.deleteKey({ keyId: deleted.keyId });
    const ws = await s.seed.workspace();
    const foreignRoot = s.as(await s.seed.rootKey(["*.*.*"], ws));
    const foreign = await issueKey(s, { apiId: await s.seed.api(ws) }, foreignRoot);
    for (const key of ["not_a_key_at_all", deleted.key, foreign.key]) {
      const r = await refusal(s.api.keys.whoami({ key }));
      expect(r, key).toMatchObject({ status: 404, errorCode: "err:svc:data:key_not_found" });
    }
  });

  it("answers 403 without read_key (no masking as 404)", async () => {
    const k = await issueKey(s);
    const creator = s.as(await s.seed.rootKey(["api.*.create_key"]));
    const r = await refusal(creator.keys.whoami({ key: k.key }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${k.apiId}.read_key`);
  });
});
