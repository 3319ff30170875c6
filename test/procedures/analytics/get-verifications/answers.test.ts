import { beforeAll, describe, expect, it } from "vitest";
import { DOORS, startServer, useServer } from "../../harness/server.js";

const s = useServer();

const PER_DAY = `select date_trunc('day', time) as day, outcome, sum(count)::int as n
  from key_verifications_per_day_v1
  where api_id = '%API%' and time >= now() - interval '30 days'
  group by 1, 2 order by 1, 2`;
const TOP_IDENTITIES = `select external_id, sum(count)::int as total
  from key_verifications_per_month_v1
  where time >= date_trunc('month', now()) and external_id is not null
  group by external_id order by total desc limit 10`;

let apiA: string;
let apiB: string;
let foreignRootKey: string;

/** Verifies a key through /v2 without a root key. */
async function verify(key: string, body: Record<string, unknown> = {}) {
  const res = await s.call("json", "keys.verifyKey", { key, ...body }, null);
  expect(res.status).toBe(200);
  return res.data;
}

beforeAll(async () => {
  const a1 = await s.seed.key({ externalId: "alice", permissions: ["docs.read"] });
  apiA = a1.apiId;
  const a2 = await s.seed.key({ apiId: apiA, externalId: "bob" });
  const b1 = await s.seed.key({ externalId: "bob" });
  apiB = b1.apiId;
  for (let i = 0; i < 3; i++) await verify(a1.key, { tags: ["path=/a"] });
  await verify(a1.key, { permissions: "docs.write" });
  await verify(a2.key);
  for (let i = 0; i < 2; i++) await verify(b1.key);
  await s.call("json", "ratelimit.limit", {
    namespace: "analytics.ns",
    identifier: "u",
    limit: 1,
    duration: 60_000,
  });
  // Another workspace with verifications of its own.
  const ws = await s.seed.workspace();
  foreignRootKey = await s.seed.rootKey(["*.*.*"], ws);
  const foreign = await s.seed.key({ apiId: await s.seed.api(ws) }, foreignRootKey);
  // Two workspaces now: a verification without a root key names the key's API.
  for (let i = 0; i < 5; i++) await verify(foreign.key, { apiId: foreign.apiId });
  await s.app.deps.events.flush();
});

async function query(sql: string, auth?: string | null, door: (typeof DOORS)[number] = "json") {
  return s.call(door, "analytics.getVerifications", { query: sql }, auth);
}

describe("analytics.getVerifications answers", () => {
  it.each(DOORS)("verifications per outcome per day for one API, via %s", async (door) => {
    const res = await query(PER_DAY.replace("%API%", apiA), undefined, door);
    expect(res.status).toBe(200);
    const today = new Date(s.clock.now()).toISOString().slice(0, 10);
    expect(res.data).toEqual([
      { day: `${today}T00:00:00+00:00`, outcome: "INSUFFICIENT_PERMISSIONS", n: 1 },
      { day: `${today}T00:00:00+00:00`, outcome: "VALID", n: 4 },
    ]);
  });

  it.each(DOORS)("the top identities by usage this month, via %s", async (door) => {
    const res = await query(TOP_IDENTITIES, undefined, door);
    expect(res.status).toBe(200);
    expect(res.data).toEqual([
      { external_id: "alice", total: 4 },
      { external_id: "bob", total: 3 },
    ]);
  });

  it("sees only its own workspace", async () => {
    const sql = "select sum(count)::int as n from key_verifications_per_hour_v1";
    expect((await query(sql)).data).toEqual([{ n: 7 }]);
    expect((await query(sql, foreignRootKey)).data).toEqual([{ n: 5 }]);
  });

  it("keeps every rollup in step with the others", async () => {
    for (const g of ["minute", "hour", "day", "month"]) {
      const res = await query(
        `select sum(count)::int as n, sum(spent_credits)::int as spent from key_verifications_per_${g}_v1`,
      );
      expect(res.data).toEqual([{ n: 7, spent: 0 }]);
    }
  });

  it("limits an API-scoped root key to its APIs' rows and to no rate-limit rows", async () => {
    const scoped = await s.seed.rootKey([`api.${apiB}.read_analytics`]);
    const res = await query(
      "select api_id, sum(count)::int as n from key_verifications_per_day_v1 group by api_id",
      scoped,
    );
    expect(res.data).toEqual([{ api_id: apiB, n: 2 }]);
  });

  it("returns an empty list when nothing matches", async () => {
    const res = await query(
      "select * from key_verifications_per_day_v1 where outcome = 'NOT_A_THING'",
    );
    expect(res.status).toBe(200);
    expect(res.data).toEqual([]);
  });
});

describe("raw tables", () => {
  it("reads raw verifications with their tags and times", async () => {
    const res = await query(
      `select outcome, tags, spent_credits from key_verifications_v1
       where api_id = '${apiA}' and 'path=/a' = any (tags)`,
    );
    expect(res.data).toEqual(
      Array.from({ length: 3 }, () => ({ outcome: "VALID", tags: ["path=/a"], spent_credits: 0 })),
    );
  });

  it("reads rate-limit decisions from ratelimits_v1", async () => {
    const res = await query(`select identifier, passed, "limit", duration from ratelimits_v1`);
    expect(res.data).toEqual([{ identifier: "u", passed: true, limit: 1, duration: 60_000 }]);
  });

  it("stops a query at the timeout with 422", async () => {
    const slow = await startServer({ config: { analyticsTimeoutMs: 200 } });
    try {
      const started = performance.now();
      const res = await slow.call("json", "analytics.getVerifications", {
        query:
          "with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r",
      });
      console.log(`timeout answered after ${(performance.now() - started).toFixed(0)} ms`);
      expect(res.status).toBe(422);
      expect(res.error?.code).toBe("err:svc:unprocessable_entity:query_execution_timeout");
    } finally {
      await slow.stop();
    }
  });
});

describe("analytics.getVerifications refuses", () => {
  it.each([
    ["another workspace's rows", "select * from key_verifications", "invalid_analytics_table"],
    ["system catalogs", "select * from pg_catalog.pg_authid", "invalid_analytics_table"],
    ["pg_sleep", "select pg_sleep(5)", "invalid_analytics_function"],
    ["writes", "delete from audit_logs", "invalid_analytics_query_type"],
    ["several statements", "select 1; select 2", "invalid_analytics_query_type"],
    [
      "a CTE that writes",
      "with x as (delete from keys returning 1) select * from x",
      "invalid_analytics_query_type",
    ],
    [
      "set_config",
      "select set_config('search_path', 'public', true)",
      "invalid_analytics_function",
    ],
    [
      "an unknown column",
      "select nope from key_verifications_per_day_v1",
      "invalid_analytics_query",
    ],
    ["a syntax error", "select from from", "invalid_analytics_query"],
    [
      "locking clauses",
      "select * from key_verifications_per_day_v1 for update",
      "invalid_analytics_query",
    ],
  ])("%s with 400, writing nothing", async (_, sql, code) => {
    const before = await s.snapshot();
    const res = await query(sql);
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe(`err:svc:bad_request:${code}`);
    expect(res.error?.errors?.[0]?.location).toBe("/query");
    expect(await s.changesSince(before)).toEqual({});
  });

  it("an empty query with 400 naming the field", async () => {
    const res = await query("");
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]?.location).toBe("/query");
  });

  it("a root key without read_analytics with 403", async () => {
    const key = await s.seed.rootKey(["api.*.read_key"]);
    const res = await query("select 1", key);
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain("api.*.read_analytics");
  });

  it("more rows than the cap with 422", async () => {
    const capped = await startServer({ config: { analyticsMaxRows: 2 } });
    try {
      const res = await capped.call("json", "analytics.getVerifications", {
        query: "select * from (values (1), (2), (3)) as v(n)",
      });
      expect(res.status).toBe(422);
      expect(res.error?.code).toBe("err:svc:unprocessable_entity:query_rows_limit_exceeded");
      const ok = await capped.call("json", "analytics.getVerifications", {
        query: "select * from (values (1), (2)) as v(n)",
      });
      expect(ok.data).toEqual([{ n: 1 }, { n: 2 }]);
    } finally {
      await capped.stop();
    }
  });
});
