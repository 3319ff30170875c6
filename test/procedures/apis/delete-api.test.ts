import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();

describe.each(DOORS)("apis.deleteApi via %s", (door) => {
  describe("ok", () => {
    it("soft-deletes the API, answers data {}, and audits it", async () => {
      const apiId = await s.seed.api();
      const res = await s.call(door, "apis.deleteApi", { apiId });
      expect(res.status).toBe(200);
      expect(res.data).toEqual({});
      expect((await s.call(door, "apis.getApi", { apiId })).status).toBe(404);
      const rows = await s.db.query<{ deleted_at: number | null }>(
        "select deleted_at from apis where id = $1",
        [apiId],
      );
      expect(rows[0]?.deleted_at).toBe(s.clock.now());
      const audit = await s.db.query<{ event: string; request_id: string }>(
        "select event, request_id from audit_logs where resource_id = $1",
        [apiId],
      );
      expect(audit).toEqual([{ event: "api.delete", request_id: res.requestId }]);
    });

    it("lets exactly one of two concurrent deletes succeed", async () => {
      const apiId = await s.seed.api();
      const results = await Promise.all([
        s.call(door, "apis.deleteApi", { apiId }),
        s.call(door, "apis.deleteApi", { apiId }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 404]);
      const audit = await s.db.query("select 1 from audit_logs where resource_id = $1", [apiId]);
      expect(audit).toHaveLength(1);
    });
  });

  describe("not found", () => {
    it("answers a second delete with 404", async () => {
      const apiId = await s.seed.api();
      expect((await s.call(door, "apis.deleteApi", { apiId })).status).toBe(200);
      const before = await s.snapshot();
      const again = await s.call(door, "apis.deleteApi", { apiId });
      expect(again.status).toBe(404);
      expect(again.error?.code).toBe("err:svc:data:api_not_found");
      expect(await s.changesSince(before)).toEqual({});
    });

    it("answers an unknown id with 404", async () => {
      expect((await s.call(door, "apis.deleteApi", { apiId: "api_nothere" })).status).toBe(404);
    });
  });

  describe("permission denied", () => {
    it("answers 403 naming api.<apiId>.delete_api and keeps the API", async () => {
      const apiId = await s.seed.api();
      const key = await s.seed.rootKey(["api.*.read_api"]);
      const before = await s.snapshot();
      const res = await s.call(door, "apis.deleteApi", { apiId }, key);
      expect(res.status).toBe(403);
      expect(res.error?.detail).toContain(`api.${apiId}.delete_api`);
      expect(await s.changesSince(before)).toEqual({});
    });
  });

  describe("other workspace", () => {
    it("cannot delete another workspace's API", async () => {
      const ws = await s.seed.workspace();
      const theirs = await s.seed.api(ws);
      expect((await s.call(door, "apis.deleteApi", { apiId: theirs })).status).toBe(404);
      const key = await s.seed.rootKey(["*.*.*"], ws);
      expect((await s.call(door, "apis.getApi", { apiId: theirs }, key)).status).toBe(200);
    });
  });
});
