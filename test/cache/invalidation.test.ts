import { describe, expect, it } from "vitest";
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
    const res = await s.call("json", "apis.createApi", { name: "fresh" });
    expect((await s.call("json", "apis.getApi", { apiId: res.data.apiId })).status).toBe(200);
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
      expect(killed.length).toBeGreaterThan(0);
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
