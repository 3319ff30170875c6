import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.getKey: the record of a key of the caller's workspace, any refill due applied.
// createKey's tests read every field back through it.

const s = useServer();

describe("keys.getKey", () => {
  it.each([
    ["too short", "x"],
    ["256 characters", `key_${"a".repeat(252)}`],
    ["with a dash", "key-1"],
    ["unknown", "key_doesnotexist12"],
  ])("answers a keyId that is %s with 404 key_not_found", async (_, keyId) => {
    const r = await refusal(s.api.keys.getKey({ keyId }));
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:key_not_found" });
  });

  it("answers a deleted key, a key of a deleted API and another workspace's key with 404", async () => {
    const deleted = await issueKey(s);
    await s.api.keys.deleteKey({ keyId: deleted.keyId });
    const orphan = await issueKey(s);
    await s.api.apis.deleteApi({ apiId: orphan.apiId });
    const ws = await s.seed.workspace();
    const foreignRoot = s.as(await s.seed.rootKey(["*.*.*"], ws));
    const foreign = await issueKey(s, { apiId: await s.seed.api(ws) }, foreignRoot);
    for (const { keyId } of [deleted, orphan, foreign]) {
      expect((await refusal(s.api.keys.getKey({ keyId }))).status, keyId).toBe(404);
    }
  });

  it("answers a missing keyId with 400", async () => {
    const r = await refusal(s.api.keys.getKey({}));
    expect(r.status).toBe(400);
    expect(r.errors).toEqual([{ location: "/keyId", message: "is required" }]);
  });

  it("answers 403 naming api.<apiId>.read_key, and 412 for decrypt", async () => {
    const k = await issueKey(s);
    const weak = s.as(await s.seed.rootKey(["api.*.update_key"]));
    const r = await refusal(weak.keys.getKey({ keyId: k.keyId }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${k.apiId}.read_key`);
    const decrypt = await refusal(s.api.keys.getKey({ keyId: k.keyId, decrypt: true }));
    expect(decrypt.status).toBe(412);
  });

  describe("on the /v2 JSON door", () => {
    it.each([
      [{ keyId: 5 }, /string/],
      [{ keyId: null }, /null/],
    ])("answers %j with 400", async (body, message) => {
      const res = await s.call("json", "keys.getKey", body);
      expect(res.status).toBe(400);
      expect(res.error?.errors?.[0]).toEqual({
        location: "/keyId",
        message: expect.stringMatching(message),
      });
    });
  });
});
