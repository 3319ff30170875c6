import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { analyticsRun, analyticsStatement } from "../../../../src/storage/queries/analytics.js";
import { startServer, useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";

// analytics.getVerifications refuses what is not a read of the caller's analytics (400, and
// nothing is written), a root key that may read no analytics (403), and a query that passes
// one of its bounds (422): the timeout, the row cap and the byte cap of the result, which the
// database enforces while it sends rows. A query that passes one of PostgreSQL's program
// limits is the caller's error (400), not the server's.

/** The row cap of the file's server; the byte cap is the procedure's own 10 MB. */
const MAX_ROWS = 100;
// A generous timeout: building an 11 MB row on PGlite can pass the default 5 s on a busy
// machine, and these tests are about the other bounds (the timeout has its own server below).
const s = useServer({ config: { analyticsTimeoutMs: 60_000, analyticsMaxRows: MAX_ROWS } });

/** `(values (1), (2), ... (n)) as v(n)`: n rows without reading any table. */
function values(n: number): string {
  return `(values ${Array.from({ length: n }, (_, i) => `(${i + 1})`).join(", ")}) as v(n)`;
}

function query(sql: string) {
  return s.api.analytics.getVerifications({ query: sql });
}

describe("analytics.getVerifications", () => {
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
  ])("refuses %s with 400 at /query, writing nothing", async (_, sql, code) => {
    const before = await s.snapshot();
    const r = await refusal(query(sql));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r).toMatchObject({ status: 400, errorCode: `err:svc:bad_request:${code}` });
    expect(r.errors[0]?.location).toBe("/query");
    expect(await s.changesSince(before)).toEqual({});
  });

  it("refuses an empty query with 400 naming the field", async () => {
    const r = await refusal(query(""));
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toEqual(["/query"]);
  });

  it("refuses a root key without read_analytics with 403 naming api.*.read_analytics", async () => {
    const key = await s.seed.rootKey(["api.*.read_key"]);
    const r = await refusal(s.as(key).analytics.getVerifications({ query: "select 1" }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain("api.*.read_analytics");
  });

  it("refuses a function call with more than 100 arguments (SQLSTATE 54023) with 400", async () => {
    const args = Array.from({ length: 101 }, (_, i) => `'${i}'`).join(", ");
    const r = await refusal(query(`select concat(${args}) as x`));
    expect(r).toMatchObject({
      status: 400,
      errorCode: "err:svc:bad_request:invalid_analytics_query",
    });
    expect(r.detail).toContain("100 arguments");
  });

  it("refuses a result of 11 MB of rows, within the row cap, with 422, the memory code", async () => {
    const sql = `select lpad('', 110000, 'x') as x from ${values(MAX_ROWS)}`;
    const r = await refusal(query(sql));
    expect(r).toMatchObject({
      status: 422,
      errorCode: "err:svc:unprocessable_entity:query_memory_limit_exceeded",
    });
  });

  it("refuses a single row larger than the cap with 422", async () => {
    const r = await refusal(query("select lpad('', 11000000, 'x') as x"));
    expect(r).toMatchObject({
      status: 422,
      errorCode: "err:svc:unprocessable_entity:query_memory_limit_exceeded",
    });
  });

  it("refuses nothing under the caps: rows just within them come back whole, in the query's order", async () => {
    const sql = `select n, lpad('', 1000, 'x') as x from ${values(MAX_ROWS)} order by n desc`;
    const { data } = await query(sql);
    expect(data).toHaveLength(MAX_ROWS);
    expect(data[0]).toMatchObject({ n: MAX_ROWS });
    expect(data[0]?.x).toHaveLength(1000);
    expect(data[MAX_ROWS - 1]).toMatchObject({ n: 1 });
  });

  it("stops a query at the timeout with 422", async () => {
    const slow = await startServer({ config: { analyticsTimeoutMs: 200 } });
    try {
      const started = performance.now();
      const r = await refusal(
        slow.api.analytics.getVerifications({
          query:
            "with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r",
        }),
      );
      console.log(`timeout answered after ${(performance.now() - started).toFixed(0)} ms`);
      expect(r).toMatchObject({
        status: 422,
        errorCode: "err:svc:unprocessable_entity:query_execution_timeout",
      });
    } finally {
      await slow.stop();
    }
  });

  it("refuses one row more than the row cap with 422", async () => {
    const r = await refusal(query(`select * from ${values(MAX_ROWS + 1)}`));
    expect(r).toMatchObject({
      status: 422,
      errorCode: "err:svc:unprocessable_entity:query_rows_limit_exceeded",
    });
  });
});

describe("the analytics statement", () => {
  it("sends no more than the byte cap of row text, whatever the query builds", async () => {
    const cap = 1024 * 1024;
    const statement = analyticsStatement(
      s.app.deps.analyticsSchema,
      `select lpad('', 100000, 'x') as x from ${values(200)}`,
      new Set(),
      10_000,
      cap,
    );
    const texts = await analyticsRun(s.app.deps.analyticsDb, statement, false, {
      workspaceId: s.workspaceId,
      apiIds: null,
      timeoutMs: 30_000,
    });
    const sent = texts.reduce((n, t) => n + (t?.length ?? 0), 0);
    // 20 MB built, at most the cap received; the rows past it arrive empty, marked.
    expect(sent).toBeLessThanOrEqual(cap);
    expect(texts).toHaveLength(200);
    expect(texts.at(-1)).toBeNull();
  });
});
