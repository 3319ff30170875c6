import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "../keys/issue-key.js";

// apis.listKeys: one page of an API's live key records by id (keyset pagination), optionally
// only those of the identity with an externalId.

const s = useServer();

describe("apis.listKeys", () => {
  it("lists an API's live keys by id with their records, filtered by externalId", async () => {
    const apiId = await s.seed.api();
    const { externalId } = await s.seed.identity();
    const a = await issueKey(s, { apiId, externalId, name: "a" });
    const b = await issueKey(s, { apiId, name: "b" });
    const c = await issueKey(s, { apiId });
    await s.api.keys.deleteKey({ keyId: c.keyId });
    await issueKey(s);
    const all = await s.api.apis.listKeys({ apiId });
    expect(all.data.map((k) => k.keyId)).toEqual([a.keyId, b.keyId].sort());
    expect(all.data.map((k) => k.name)).toEqual(a.keyId < b.keyId ? ["a", "b"] : ["b", "a"]);
    expect(all.pagination?.hasMore).toBe(false);
    expect(all.pagination?.cursor).toBeUndefined();
    const mine = await s.api.apis.listKeys({ apiId, externalId });
    expect(mine.data.map((k) => k.keyId)).toEqual([a.keyId]);
    expect(mine.data[0]?.identity?.externalId).toBe(externalId);
    const nobody = await s.api.apis.listKeys({ apiId, externalId: "nobody_at_all" });
    expect(nobody.data).toEqual([]);
    expect(nobody.pagination?.hasMore).toBe(false);
  });

  it("accepts the SDK's defaults and answers 412 for decrypt", async () => {
    const apiId = await s.seed.api();
    const defaults = { apiId, revalidateKeysCache: false, decrypt: false, limit: 100 };
    expect((await s.api.apis.listKeys(defaults)).data).toEqual([]);
    const r = await refusal(s.api.apis.listKeys({ apiId, decrypt: true }));
    expect(r).toMatchObject({ status: 412, errorCode: "err:svc:application:precondition_failed" });
  });

  it("answers an unknown API with 404, and needs read_key and read_api", async () => {
    const missing = await refusal(s.api.apis.listKeys({ apiId: "api_nope" }));
    expect(missing).toMatchObject({ status: 404, errorCode: "err:svc:data:api_not_found" });
    const apiId = await s.seed.api();
    const keyReader = s.as(await s.seed.rootKey([`api.${apiId}.read_key`]));
    const r = await refusal(keyReader.apis.listKeys({ apiId }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${apiId}.read_api`);
    const both = s.as(await s.seed.rootKey([`api.${apiId}.read_key`, `api.${apiId}.read_api`]));
    expect((await both.apis.listKeys({ apiId })).data).toEqual([]);
  });

  it("walks 1000 keys with limit 100 and sees each exactly once", async () => {
    const apiId = await s.seed.api();
    // Seeded straight into storage: 1000 keys through createKey would measure createKey.
    await s.db.query(
      `insert into keys (id, workspace_id, api_id, hash, start, enabled, created_at)
       select 'key_p' || lpad(g::text, 12, '0'), $1, $2, 'hash_' || $2 || '_' || g, 'st', true, $3
       from generate_series(1, 1000) g`,
      [s.workspaceId, apiId, s.clock.now()],
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await s.api.apis.listKeys({ apiId, limit: 100, cursor });
      pages++;
      seen.push(...page.data.map((k) => k.keyId));
      if (!page.pagination?.hasMore) break;
      cursor = page.pagination.cursor;
    }
    expect(pages).toBe(10);
    expect(seen).toHaveLength(1000);
    expect(new Set(seen).size).toBe(1000);
    expect([...seen].sort()).toEqual(seen);
  });
});
