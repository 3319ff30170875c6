import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();

describe.each(DOORS)("apis.getApi via %s", (door) => {
  describe("ok", () => {
    it("returns id and name", async () => {
      const apiId = await s.seed.api(s.workspaceId, "billing");
      const res = await s.call(door, "apis.getApi", { apiId });
      expect(res).toMatchObject({ status: 200, data: { id: apiId, name: "billing" } });
    });
  });

  describe("invalid input", () => {
    it("rejects a missing apiId with 400 at /apiId", async () => {
      const res = await s.call(door, "apis.getApi", {});
      expect(res.status).toBe(400);
      expect(res.error?.errors).toEqual([{ location: "/apiId", message: "is required" }]);
    });
  });

  describe("not found", () => {
    it.each([
      ["an unknown id", "api_doesnotexist123"],
      ["a malformed id, which cannot exist", "not an id!"],
      ["a very long id", `api_${"x".repeat(400)}`],
    ])("answers %s with 404 api_not_found", async (_, apiId) => {
      const res = await s.call(door, "apis.getApi", { apiId });
      expect(res.status).toBe(404);
      expect(res.error?.code).toBe("err:svc:data:api_not_found");
      expect(res.error?.title).toBe("Not Found");
    });

    it("answers a deleted API with 404", async () => {
      const apiId = await s.seed.api();
      await s.call(door, "apis.getApi", { apiId });
      expect((await s.call(door, "apis.deleteApi", { apiId })).status).toBe(200);
      expect((await s.call(door, "apis.getApi", { apiId })).status).toBe(404);
    });

    it("looks up before it authorizes: a key without read_api gets 404 for an unknown id", async () => {
      const key = await s.seed.rootKey(["api.*.create_api"]);
      expect((await s.call(door, "apis.getApi", { apiId: "api_unknown" }, key)).status).toBe(404);
    });
  });

  describe("permission denied", () => {
    it("answers an existing API with 403 naming the per-API permission", async () => {
      const apiId = await s.seed.api();
      const key = await s.seed.rootKey(["api.*.create_api"]);
      const res = await s.call(door, "apis.getApi", { apiId }, key);
      expect(res.status).toBe(403);
      expect(res.error?.detail).toContain(`api.${apiId}.read_api`);
    });

    it("honours a grant for one API only", async () => {
      const mine = await s.seed.api();
      const other = await s.seed.api();
      const key = await s.seed.rootKey([`api.${mine}.read_api`]);
      expect((await s.call(door, "apis.getApi", { apiId: mine }, key)).status).toBe(200);
      expect((await s.call(door, "apis.getApi", { apiId: other }, key)).status).toBe(403);
    });
  });

  describe("other workspace", () => {
    it("does not reveal another workspace's API: 404, even with *.*.*", async () => {
      const ws = await s.seed.workspace();
      const theirs = await s.seed.api(ws);
      const res = await s.call(door, "apis.getApi", { apiId: theirs });
      expect(res.status).toBe(404);
      expect(res.error?.code).toBe("err:svc:data:api_not_found");
    });
  });
});
