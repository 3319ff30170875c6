import { describe, expect, it } from "vitest";
import { keyInWorkspace } from "../../src/cache/caches.js";
import { hashKey } from "../../src/domain/key-material.js";
import { randomString } from "../../src/domain/random.js";
import { currentEngine } from "../harness/engine.js";
import { useServer } from "../harness/server.js";

describe("the invalidation bus", () => {
  const s = useServer({ config: { cacheTtlMs: 30_000 } });

  it("applies a change to this node's caches before the mutation answers", async () => {
    const apiId = await s.seed.api();
    expect((await s.call("json", "apis.getApi", { apiId })).status).toBe(200);
    expect((await s.call("json", "apis.deleteApi", { apiId })).status).toBe(200);
    expect((await s.call("json", "apis.getApi", { apiId })).status).toBe(404);
  });

  it("forgets a cached miss when the object is created", async () => {
    // A key that does not exist yet: verifying it caches the miss under its hash.
    const apiId = await s.seed.api();
    const key = `fresh_${randomString(24)}`;
    const hash = hashKey(key);
    const before = await s.call("json", "keys.verifyKey", { key });
    expect(before.data).toMatchObject({ valid: false, code: "NOT_FOUND" });
    expect(s.app.deps.caches.keys.get(keyInWorkspace(s.workspaceId, hash))).toBeNull();
    // Creating it (a migrated key with that hash) must drop the cached miss at once.
    const migrated = await s.call("json", "keys.migrateKeys", {
      migrationId: "fresh",
      apiId,
      keys: [{ hash }],
    });
    expect(migrated.data.failed).toEqual([]);
    const after = await s.call("json", "keys.verifyKey", { key });
    expect(after.data).toMatchObject({ valid: true, code: "VALID" });
  });

  it.skipIf(currentEngine() !== "postgres")(
    "drops the whole cache when its LISTEN session reconnects (it may have missed notifications)",
    async () => {
      const apiId = await s.seed.api();
      expect((await s.call("json", "apis.getApi", { apiId })).status).toBe(200);
      // A change the bus never hears of: written behind Latchkey's back.
      await s.db.query("update apis set deleted_at = 1 where id = $1", [apiId]);
      expect((await s.call("json", "apis.getApi", { apiId })).status).toBe(200);
      const killed = await s.db.query<{ ok: boolean }>(
        `select pg_terminate_backend(pid) as ok
         from pg_stat_activity
         where datname = current_database()
           and query ilike 'listen%'`,
      );
      expect(killed.some((row) => row.ok)).toBe(true);
      const started = performance.now();
      const deadline = Date.now() + 10_000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) {
        status = (await s.call("json", "apis.getApi", { apiId })).status;
      }
      console.log(
        `cache dropped ${(performance.now() - started).toFixed(1)} ms after the LISTEN session was killed`,
      );
      expect(status).toBe(404);
    },
  );
});
