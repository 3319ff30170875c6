import { describe, expect, it } from "vitest";
import { analyticsRun, analyticsStatement } from "../../../src/storage/queries/analytics.js";
import { useServer } from "../../harness/server.js";

// An analytics query is bounded in what it can make the server hold: the database sends a
// row's JSON only while the result stays within the byte cap, and a query that passes one of
// PostgreSQL's program limits is the caller's error, not the server's.

const s = useServer();

/** `(values (1), (2), ... (n)) as v(n)`: n rows without reading any table. */
function rows(n: number): string {
  return `(values ${Array.from({ length: n }, (_, i) => `(${i + 1})`).join(", ")}) as v(n)`;
}

async function query(sql: string) {
  return s.call("json", "analytics.getVerifications", { query: sql });
}

describe("analytics.getVerifications refuses", () => {
  it("a function call with more than 100 arguments (SQLSTATE 54023) with 400", async () => {
    const args = Array.from({ length: 101 }, (_, i) => `'${i}'`).join(", ");
    const res = await query(`select concat(${args}) as x`);
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe("err:svc:bad_request:invalid_analytics_query");
    expect(res.error?.detail).toContain("100 arguments");
  });

  it("a result of 20 MB of rows with 422, the memory code", async () => {
    const res = await query(`select lpad('', 100000, 'x') as x from ${rows(200)}`);
    expect(res.status).toBe(422);
    expect(res.error?.code).toBe("err:svc:unprocessable_entity:query_memory_limit_exceeded");
  });

  it("a single row larger than the cap with 422", async () => {
    const res = await query("select lpad('', 11000000, 'x') as x");
    expect(res.status).toBe(422);
    expect(res.error?.code).toBe("err:svc:unprocessable_entity:query_memory_limit_exceeded");
  });

  it("nothing under the cap: rows just within it come back whole, in the query's order", async () => {
    const res = await query(`select n, lpad('', 1000, 'x') as x from ${rows(100)} order by n desc`);
    expect(res.status).toBe(200);
    expect(res.data).toHaveLength(100);
    expect(res.data[0].n).toBe(100);
    expect(res.data[99].n).toBe(1);
  });
});

describe("the analytics statement", () => {
  it("sends no more than the byte cap of row text, whatever the query builds", async () => {
    const cap = 1024 * 1024;
    const statement = analyticsStatement(
      s.app.deps.analyticsSchema,
      `select lpad('', 100000, 'x') as x from ${rows(200)}`,
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
