import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { ListAuditLogsRequestSchema } from "../../../gen/latchkey/v2/analytics_pb.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// analytics.listAuditLogs: one page of the caller's workspace's audit records, newest first,
// filtered by time, actor, event and resource.

const s = useServer();

type ListAuditLogs = MessageInitShape<typeof ListAuditLogsRequestSchema>;

describe("analytics.listAuditLogs", () => {
  it("lists a resource's changes with their actor, resource and request id", async () => {
    const api = await s.api.apis.createApi({ name: "audited" });
    const apiId = api.data?.apiId as string;
    const key = await s.api.keys.createKey({ apiId, name: "k" });
    const res = await s.api.analytics.listAuditLogs({ resourceId: apiId });
    expect(res.data).toHaveLength(1);
    expect(res.data[0]).toMatchObject({
      event: "api.create",
      actor: { type: "rootkey", id: expect.stringMatching(/^rk_/) },
      resource: { type: "api", id: apiId },
      requestId: api.meta?.requestId,
    });
    const byKey = await s.api.analytics.listAuditLogs({
      resourceId: key.data?.keyId,
      event: "key.create",
    });
    expect(byKey.data.map((r) => r.event)).toEqual(["key.create"]);
  });

  it("pages newest first with a cursor and filters by time and actor", async () => {
    const start = s.clock.now();
    s.clock.advance(1000);
    for (let i = 0; i < 5; i++) await s.api.apis.createApi({ name: `page-${i}` });
    const filter = { event: "api.create", start: BigInt(start + 1), limit: 3 };
    const first = await s.api.analytics.listAuditLogs(filter);
    expect(first.data).toHaveLength(3);
    expect(first.pagination).toMatchObject({ cursor: expect.any(String), hasMore: true });
    const second = await s.api.analytics.listAuditLogs({
      ...filter,
      cursor: first.pagination?.cursor,
    });
    expect(second.data).toHaveLength(2);
    expect(second.pagination?.hasMore).toBe(false);
    expect(second.pagination?.cursor).toBeUndefined();
    const ids = [...first.data, ...second.data].map((r) => Number(r.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const byOther = await s.api.analytics.listAuditLogs({ actorId: "rk_nobody" });
    expect(byOther.data).toEqual([]);
    const future = await s.api.analytics.listAuditLogs({ start: BigInt(s.clock.now() + 1) });
    expect(future.data).toEqual([]);
  });

  it("does not show another workspace's records", async () => {
    const ws = await s.seed.workspace();
    const foreignKey = await s.seed.rootKey(["*.*.*"], ws);
    const api = await s.as(foreignKey).apis.createApi({ name: "foreign" });
    const filter = { resourceId: api.data?.apiId };
    expect((await s.api.analytics.listAuditLogs(filter)).data).toEqual([]);
    expect((await s.as(foreignKey).analytics.listAuditLogs(filter)).data).toHaveLength(1);
  });

  it("needs audit.*.read", async () => {
    const key = await s.seed.rootKey(["api.*.read_api"]);
    const r = await refusal(s.as(key).analytics.listAuditLogs({}));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain("audit.*.read");
    await s.api.apis.createApi({ name: "read me" });
    const reader = await s.seed.rootKey(["audit.*.read"]);
    expect((await s.as(reader).analytics.listAuditLogs({})).data.length).toBeGreaterThan(0);
  });

  it.each<[ListAuditLogs, string]>([
    [{ limit: 0 }, "/limit"],
    [{ limit: 101 }, "/limit"],
    [{ cursor: "not-a-cursor" }, "/cursor"],
    [{ start: -1n }, "/start"],
    [{ event: "" }, "/event"],
  ])("refuses %o with 400 naming the field", async (body, location) => {
    const r = await refusal(s.api.analytics.listAuditLogs(body));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toEqual([location]);
  });
});
