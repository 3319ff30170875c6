import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();

describe("analytics.listAuditLogs", () => {
  it.each(DOORS)("lists the workspace's changes newest first, via %s", async (door) => {
    const api = await s.call(door, "apis.createApi", { name: `audit-${door}` });
    const apiId = api.data.apiId;
    const key = await s.call(door, "keys.createKey", { apiId, name: "k" });
    const res = await s.call(door, "analytics.listAuditLogs", { resourceId: apiId });
    expect(res.status).toBe(200);
    expect(res.data).toEqual([
      expect.objectContaining({
        event: "api.create",
        actor: { type: "rootkey", id: expect.stringMatching(/^rk_/) },
        resource: { type: "api", id: apiId },
        requestId: api.requestId,
      }),
    ]);
    const byKey = await s.call(door, "analytics.listAuditLogs", {
      resourceId: key.data.keyId,
      event: "key.create",
    });
    expect(byKey.data.map((r: { event: string }) => r.event)).toEqual(["key.create"]);
  });

  it("pages with a cursor and filters by time and actor", async () => {
    const start = s.clock.now();
    s.clock.advance(1000);
    for (let i = 0; i < 5; i++) await s.call("json", "apis.createApi", { name: `page-${i}` });
    const first = await s.call("json", "analytics.listAuditLogs", {
      event: "api.create",
      start: start + 1,
      limit: 3,
    });
    expect(first.data).toHaveLength(3);
    expect(first.pagination).toEqual({ cursor: expect.any(String), hasMore: true });
    const second = await s.call("json", "analytics.listAuditLogs", {
      event: "api.create",
      start: start + 1,
      limit: 3,
      cursor: first.pagination?.cursor,
    });
    expect(second.data).toHaveLength(2);
    expect(second.pagination).toEqual({ hasMore: false });
    const ids = [...first.data, ...second.data].map((r: { id: string }) => Number(r.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const byOther = await s.call("json", "analytics.listAuditLogs", { actorId: "rk_nobody" });
    expect(byOther.data).toEqual([]);
    const future = await s.call("json", "analytics.listAuditLogs", { start: s.clock.now() + 1 });
    expect(future.data).toEqual([]);
  });

  it("does not show another workspace's records", async () => {
    const ws = await s.seed.workspace();
    const foreignKey = await s.seed.rootKey(["*.*.*"], ws);
    const api = await s.call("json", "apis.createApi", { name: "foreign" }, foreignKey);
    const mine = await s.call("json", "analytics.listAuditLogs", { resourceId: api.data.apiId });
    expect(mine.data).toEqual([]);
    const theirs = await s.call(
      "json",
      "analytics.listAuditLogs",
      { resourceId: api.data.apiId },
      foreignKey,
    );
    expect(theirs.data).toHaveLength(1);
  });

  it("needs audit.*.read", async () => {
    const key = await s.seed.rootKey(["api.*.read_api"]);
    const res = await s.call("json", "analytics.listAuditLogs", {}, key);
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain("audit.*.read");
    const reader = await s.seed.rootKey(["audit.*.read"]);
    expect((await s.call("json", "analytics.listAuditLogs", {}, reader)).status).toBe(200);
  });

  it.each([
    [{ limit: 0 }, "/limit"],
    [{ limit: 101 }, "/limit"],
    [{ cursor: "not-a-cursor" }, "/cursor"],
    [{ start: -1 }, "/start"],
    [{ event: "" }, "/event"],
  ])("refuses %o with 400 naming the field", async (body, location) => {
    const res = await s.call("json", "analytics.listAuditLogs", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]?.location).toBe(location);
  });
});
