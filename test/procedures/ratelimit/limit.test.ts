import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;
const HOUR = 3_600_000;

describe.each(DOORS)("ratelimit.limit via %s", (door) => {
  it("admits up to the limit in a fixed window, reports remaining and reset, and resets", async () => {
    s.clock.set(Date.parse("2026-10-01T10:15:00Z"));
    const ns = `api.requests.${++n}`;
    const body = { namespace: ns, identifier: "user_1", limit: 3, duration: HOUR };
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await s.call(door, "ratelimit.limit", body)).data);
    expect(answers.map((a) => [a.success, a.remaining, a.limit])).toEqual([
      [true, 2, 3],
      [true, 1, 3],
      [true, 0, 3],
      [false, 0, 3],
    ]);
    expect(answers[0].reset).toBe(Date.parse("2026-10-01T11:00:00Z"));
    expect(
      (await s.call(door, "ratelimit.limit", { ...body, identifier: "user_2" })).data.success,
    ).toBe(true);
    s.clock.set(Date.parse("2026-10-01T11:00:00Z"));
    expect((await s.call(door, "ratelimit.limit", body)).data).toMatchObject({
      success: true,
      remaining: 2,
    });
  });

  it("takes the cost given; cost 0 checks without taking", async () => {
    const ns = `cost.${++n}`;
    const body = { namespace: ns, identifier: "u", limit: 10, duration: HOUR };
    expect((await s.call(door, "ratelimit.limit", { ...body, cost: 7 })).data.remaining).toBe(3);
    expect((await s.call(door, "ratelimit.limit", { ...body, cost: 0 })).data).toMatchObject({
      success: true,
      remaining: 3,
    });
    expect((await s.call(door, "ratelimit.limit", { ...body, cost: 4 })).data).toMatchObject({
      success: false,
      remaining: 0,
    });
    expect((await s.call(door, "ratelimit.limit", { ...body, cost: 3 })).data).toMatchObject({
      success: true,
      remaining: 0,
    });
  });

  it("creates the namespace on first use (ratelimit.*.limit), then finds it by name or id", async () => {
    const ns = `created.${++n}`;
    const weak = await s.seed.rootKey(["ratelimit.rlns_other.limit"]);
    const denied = await s.call(
      door,
      "ratelimit.limit",
      { namespace: ns, identifier: "u", limit: 1, duration: 1000 },
      weak,
    );
    expect(denied.status).toBe(403);
    expect(denied.error?.detail).toContain("ratelimit.*.limit");
    expect(
      (
        await s.call(door, "ratelimit.limit", {
          namespace: ns,
          identifier: "u",
          limit: 5,
          duration: HOUR,
        })
      ).status,
    ).toBe(200);
    const rows = await s.db.query<{ id: string }>(
      "select id from ratelimit_namespaces where name = $1",
      [ns],
    );
    const id = rows[0]?.id as string;
    expect(id).toMatch(/^rlns_/);
    const byId = await s.call(door, "ratelimit.limit", {
      namespace: id,
      identifier: "u",
      limit: 5,
      duration: HOUR,
    });
    expect(byId.data.remaining).toBe(3);
    const scoped = await s.seed.rootKey([`ratelimit.${id}.limit`]);
    expect(
      (
        await s.call(
          door,
          "ratelimit.limit",
          { namespace: ns, identifier: "u", limit: 5, duration: HOUR },
          scoped,
        )
      ).status,
    ).toBe(200);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where resource_id = $1",
      [id],
    );
    expect(audit).toEqual([{ event: "ratelimitNamespace.create" }]);
  });

  it.each([
    [
      "an empty namespace",
      { namespace: "", identifier: "u", limit: 1, duration: 1000 },
      "/namespace",
    ],
    [
      "a namespace of 513 characters",
      { namespace: "n".repeat(513), identifier: "u", limit: 1, duration: 1000 },
      "/namespace",
    ],
    [
      "an identifier of 513 characters",
      { namespace: "ok", identifier: "i".repeat(513), limit: 1, duration: 1000 },
      "/identifier",
    ],
    ["a limit of 0", { namespace: "ok", identifier: "u", limit: 0, duration: 1000 }, "/limit"],
    [
      "a duration of 999",
      { namespace: "ok", identifier: "u", limit: 1, duration: 999 },
      "/duration",
    ],
    [
      "a duration over 30 days",
      { namespace: "ok", identifier: "u", limit: 1, duration: 2592000001 },
      "/duration",
    ],
    [
      "a negative cost",
      { namespace: "ok", identifier: "u", limit: 1, duration: 1000, cost: -1 },
      "/cost",
    ],
  ])("rejects %s with 400 and writes nothing", async (_, body, location) => {
    const before = await s.snapshot();
    const res = await s.call(door, "ratelimit.limit", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]?.location).toBe(location);
    expect(await s.changesSince(before)).toEqual({});
  });
});

describe.each(DOORS)("ratelimit.multiLimit via %s", (door) => {
  it("is all-or-nothing and reports each limit in request order", async () => {
    const ns = `multi.${++n}`;
    const minute = { namespace: ns, identifier: "u", limit: 1, duration: 60_000 };
    const month = {
      namespace: `${ns}.month`,
      identifier: "u",
      limit: 200,
      duration: 2_592_000_000,
    };
    const first = await s.call(door, "ratelimit.multiLimit", { limits: [month, minute] });
    expect(first.data.passed).toBe(true);
    expect(first.data.limits.map((l: { remaining: number }) => l.remaining)).toEqual([199, 0]);
    const second = await s.call(door, "ratelimit.multiLimit", { limits: [month, minute] });
    expect(second.data.passed).toBe(false);
    expect(second.data.limits).toEqual([
      expect.objectContaining({
        namespace: `${ns}.month`,
        identifier: "u",
        passed: true,
        remaining: 199,
      }),
      expect.objectContaining({ namespace: ns, passed: false, remaining: 0 }),
    ]);
    expect((await s.call(door, "ratelimit.limit", month)).data.remaining).toBe(198);
  });

  it("rejects an empty list and more than 100 limits", async () => {
    expect((await s.call(door, "ratelimit.multiLimit", { limits: [] })).status).toBe(400);
    const many = Array.from({ length: 101 }, () => ({
      namespace: "x",
      identifier: "u",
      limit: 1,
      duration: 1000,
    }));
    expect(
      (await s.call(door, "ratelimit.multiLimit", { limits: many })).error?.errors?.[0]?.location,
    ).toBe("/limits");
  });
});

describe("ratelimit.multiLimit /v2 body", () => {
  it("accepts the SDK's bare array", async () => {
    const res = await s.raw("/v2/ratelimit.multiLimit", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
      body: JSON.stringify([
        { namespace: `bare.${++n}`, identifier: "u", limit: 2, duration: 1000 },
      ]),
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ passed: true, limits: [{ remaining: 1 }] });
  });
});

describe("rate-limit events", () => {
  it("records each decision for analytics", async () => {
    const ns = `events.${++n}`;
    await s.call("json", "ratelimit.limit", {
      namespace: ns,
      identifier: "ev",
      limit: 1,
      duration: HOUR,
    });
    await s.call("json", "ratelimit.limit", {
      namespace: ns,
      identifier: "ev",
      limit: 1,
      duration: HOUR,
    });
    await s.app.deps.events.flush();
    const rows = await s.db.query<{ passed: boolean; identifier: string }>(
      "select e.passed, e.identifier from ratelimit_events e join ratelimit_namespaces n on n.id = e.namespace_id where n.name = $1 order by e.passed desc",
      [ns],
    );
    expect(rows).toEqual([
      { passed: true, identifier: "ev" },
      { passed: false, identifier: "ev" },
    ]);
  });

  it("leaves a decision out when the caller sends X-Unkey-Metrics: disabled", async () => {
    const ns = `events.quiet.${++n}`;
    const body = { namespace: ns, identifier: "q", limit: 5, duration: HOUR };
    const res = await s.raw("/v2/ratelimit.limit", {
      method: "POST",
      headers: {
        authorization: `Bearer ${s.rootKey}`,
        "content-type": "application/json",
        "x-unkey-metrics": "disabled",
      },
      body: JSON.stringify(body),
    });
    expect(res.body.data.success).toBe(true);
    await s.call("json", "ratelimit.limit", body);
    await s.app.deps.events.flush();
    const rows = await s.db.query<{ remaining: number }>(
      "select e.remaining from ratelimit_events e join ratelimit_namespaces n on n.id = e.namespace_id where n.name = $1",
      [ns],
    );
    expect(rows.map((r) => Number(r.remaining))).toEqual([3]);
  });
});
