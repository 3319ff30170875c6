import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();

describe.each(DOORS)("keys.getKey via %s", (door) => {
  it.each([
    ["too short", "x"],
    ["256 characters", `key_${"a".repeat(252)}`],
    ["with a dash", "key-1"],
    ["unknown", "key_doesnotexist12"],
  ])("answers a keyId that is %s with 404 key_not_found", async (_, keyId) => {
    const res = await s.call(door, "keys.getKey", { keyId });
    expect(res.status).toBe(404);
    expect(res.error?.code).toBe("err:svc:data:key_not_found");
  });

  it("answers a deleted key, a key of a deleted API and another workspace's key with 404", async () => {
    const deleted = await s.seed.key();
    await s.call(door, "keys.deleteKey", { keyId: deleted.keyId });
    const orphan = await s.seed.key();
    await s.call(door, "apis.deleteApi", { apiId: orphan.apiId });
    const ws = await s.seed.workspace();
    const foreignRoot = await s.seed.rootKey(["*.*.*"], ws);
    const foreign = await s.seed.key({ apiId: await s.seed.api(ws) }, foreignRoot);
    for (const { keyId } of [deleted, orphan, foreign]) {
      expect((await s.call(door, "keys.getKey", { keyId })).status).toBe(404);
    }
  });

  it("answers a missing keyId with 400", async () => {
    const res = await s.call(door, "keys.getKey", {});
    expect(res.status).toBe(400);
    expect(res.error?.errors).toEqual([{ location: "/keyId", message: "is required" }]);
  });

  it("answers 403 naming api.<apiId>.read_key, and 412 for decrypt", async () => {
    const k = await s.seed.key();
    const weak = await s.seed.rootKey(["api.*.update_key"]);
    const res = await s.call(door, "keys.getKey", { keyId: k.keyId }, weak);
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain(`api.${k.apiId}.read_key`);
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId, decrypt: true })).status).toBe(412);
  });
});

describe("keys.getKey /v2 body rules", () => {
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

describe.each(DOORS)("keys.whoami via %s", (door) => {
  it("returns the record of the key whose secret is given, disabled or not", async () => {
    const k = await s.seed.key({ name: "who", enabled: false });
    const res = await s.call(door, "keys.whoami", { key: k.key });
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ keyId: k.keyId, name: "who", enabled: false });
  });

  it("answers an unknown secret, a deleted key and another workspace's key with 404", async () => {
    const deleted = await s.seed.key();
    await s.call(door, "keys.deleteKey", { keyId: deleted.keyId });
    const ws = await s.seed.workspace();
    const foreign = await s.seed.key(
      { apiId: await s.seed.api(ws) },
      await s.seed.rootKey(["*.*.*"], ws),
    );
    for (const key of ["not_a_key_at_all", deleted.key, foreign.key]) {
      expect((await s.call(door, "keys.whoami", { key })).status).toBe(404);
    }
  });

  it("answers 403 without read_key (no masking as 404)", async () => {
    const k = await s.seed.key();
    const res = await s.call(
      door,
      "keys.whoami",
      { key: k.key },
      await s.seed.rootKey(["api.*.create_key"]),
    );
    expect(res.status).toBe(403);
  });
});

describe.each(DOORS)("apis.listKeys via %s", (door) => {
  it("lists an API's live keys by id with their records, filtered by externalId", async () => {
    const apiId = await s.seed.api();
    const { externalId } = await s.seed.identity();
    const a = await s.seed.key({ apiId, externalId, name: "a" });
    const b = await s.seed.key({ apiId, name: "b" });
    const c = await s.seed.key({ apiId });
    await s.call(door, "keys.deleteKey", { keyId: c.keyId });
    await s.seed.key();
    const all = await s.call(door, "apis.listKeys", { apiId });
    expect(all.data.map((k: { keyId: string }) => k.keyId)).toEqual([a.keyId, b.keyId].sort());
    expect(all.pagination).toEqual({ hasMore: false });
    const mine = await s.call(door, "apis.listKeys", { apiId, externalId });
    expect(mine.data.map((k: { keyId: string }) => k.keyId)).toEqual([a.keyId]);
    expect(mine.data[0].identity.externalId).toBe(externalId);
    const nobody = await s.call(door, "apis.listKeys", { apiId, externalId: "nobody_at_all" });
    expect(nobody).toMatchObject({ status: 200, data: [], pagination: { hasMore: false } });
  });

  it("accepts the SDK's defaults and answers 412 for decrypt", async () => {
    const apiId = await s.seed.api();
    const res = await s.call(door, "apis.listKeys", {
      apiId,
      revalidateKeysCache: false,
      decrypt: false,
      limit: 100,
    });
    expect(res.status).toBe(200);
    expect((await s.call(door, "apis.listKeys", { apiId, decrypt: true })).status).toBe(412);
  });

  it("answers an unknown API with 404, and needs read_key and read_api", async () => {
    expect((await s.call(door, "apis.listKeys", { apiId: "api_nope" })).status).toBe(404);
    const apiId = await s.seed.api();
    const res = await s.call(
      door,
      "apis.listKeys",
      { apiId },
      await s.seed.rootKey([`api.${apiId}.read_key`]),
    );
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain(`api.${apiId}.read_api`);
    const both = await s.seed.rootKey([`api.${apiId}.read_key`, `api.${apiId}.read_api`]);
    expect((await s.call(door, "apis.listKeys", { apiId }, both)).status).toBe(200);
  });
});

describe("apis.listKeys pagination", () => {
  it("walks 1000 keys with limit 100 and sees each exactly once", async () => {
    const apiId = await s.seed.api();
    const ws = s.workspaceId;
    // Seeded straight into storage: 1000 keys through createKey would measure createKey.
    await s.db.query(
      `insert into keys (id, workspace_id, api_id, hash, start, enabled, created_at)
       select 'key_p' || lpad(g::text, 12, '0'), $1, $2, 'hash_' || $2 || '_' || g, 'st', true, $3
       from generate_series(1, 1000) g`,
      [ws, apiId, s.clock.now()],
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await s.call("json", "apis.listKeys", {
        apiId,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      });
      pages++;
      seen.push(...res.data.map((k: { keyId: string }) => k.keyId));
      if (!res.pagination?.hasMore) break;
      cursor = res.pagination.cursor;
    }
    expect(pages).toBe(10);
    expect(seen).toHaveLength(1000);
    expect(new Set(seen).size).toBe(1000);
    expect([...seen].sort()).toEqual(seen);
  });
});
