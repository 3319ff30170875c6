import { beforeAll, describe, expect, it } from "vitest";
import { checkQuery, confirmWrapped, loadQueryParser } from "../../../src/analytics/query.js";
import { QueryRefused } from "../../../src/domain/analytics/sql-guard.js";
import { analyticsStatement } from "../../../src/storage/queries/analytics.js";

beforeAll(() => loadQueryParser());

function refusal(sql: string): { kind: string; message: string } {
  try {
    checkQuery(sql);
  } catch (err) {
    if (err instanceof QueryRefused) return { kind: err.kind, message: err.message };
    throw err;
  }
  throw new Error(`accepted: ${sql}`);
}

describe("analytics queries the guard accepts", () => {
  it.each([
    [
      "per outcome per day for one API",
      `select date_trunc('day', time) as day, outcome, sum(count) as n
       from key_verifications_per_day_v1
       where api_id = 'api_1' and time >= now() - interval '30 days'
       group by 1, 2 order by 1`,
      ["key_verifications_per_day_v1"],
    ],
    [
      "top identities this month",
      `select external_id, sum(count)::bigint as total from key_verifications_per_month_v1
       where time >= date_trunc('month', now()) group by external_id order by total desc limit 10`,
      ["key_verifications_per_month_v1"],
    ],
    [
      "raw rows of one key with tags, a CTE and a sub-select over a virtual table",
      `with recent as (select * from key_verifications_v1 where key_id = 'key_1')
       select r.outcome, count(*) filter (where 'path=/x' = any (r.tags)),
         (select count(*) from key_verifications_per_hour_v1) as hours
       from recent r where r.time > extract(epoch from now() - interval '1 day') * 1000
       group by r.outcome;`,
      ["key_verifications_v1", "key_verifications_per_hour_v1"],
    ],
    [
      "unions, window functions, CASE, COALESCE, casts",
      `select outcome, rank() over (order by count desc), case when count > 10 then 'many' else 'few' end,
         coalesce(identity_id, '-'), count::text, cast(spent_credits as numeric(10, 2))
       from key_verifications_per_minute_v1
       union all
       select 'limited', 1, 'x', identifier, cost::text, 0 from ratelimits_v1 where not passed`,
      ["key_verifications_per_minute_v1", "ratelimits_v1"],
    ],
    [
      "unnest tags in FROM",
      "select tag, count(*) from key_verifications_v1, unnest(tags) as tag group by tag",
      ["key_verifications_v1"],
    ],
    ["no table at all", "select 1 + 1 as two, current_date", []],
  ])("%s", (_, sql, tables) => {
    expect([...checkQuery(sql).tables].sort()).toEqual([...tables].sort());
  });

  it("keeps the statement's own text, without a trailing semicolon", () => {
    expect(checkQuery("  select 1 ;  ").text).toBe("select 1 ");
  });

  it("puts a trailing comment of the query on its own line inside the wrapper", () => {
    const checked = checkQuery("select count(*) from key_verifications_per_day_v1 -- total");
    const statement = analyticsStatement('"public"', checked.text, checked.tables, 10, 1024);
    expect(statement).toContain("-- total\n) as latchkey_row limit 11");
  });
});

describe("the wrapping check", () => {
  const wrap = (query: string, checkedAs = query) => {
    const checked = checkQuery(checkedAs);
    const statement = analyticsStatement('"public"', query, checked.tables, 10, 1024);
    return () => confirmWrapped(statement, checked);
  };

  it.each([
    ["an IN list", "select 1 from key_verifications_per_day_v1 where outcome in ('A', 'B')"],
    ["a NOT IN list", "select 1 where 'a' not in ('b', 'c')"],
    ["an ARRAY[...] under ANY", "select 1 where 'a' = any (array['a', 'b'])"],
    ["an ARRAY[...] with @>", "select 1 from key_verifications_v1 where tags @> array['x']"],
  ])("accepts a query with %s, whose list positions move inside the wrapper", (_, sql) => {
    expect(wrap(sql)).not.toThrow();
  });

  it("refuses a wrapped statement whose sub-select differs from the checked query", () => {
    const checked = "select 1 where 'a' in ('a', 'b')";
    expect(wrap("select 1 where 'a' in ('a', 'c')", checked)).toThrow(QueryRefused);
    expect(
      wrap("select 1 where 'a' = any (array['a'])", "select 1 where 'a' = any (array['b'])"),
    ).toThrow(QueryRefused);
  });
});

describe("analytics queries the guard refuses", () => {
  it.each([
    [
      "another workspace's rows through a physical table",
      "select * from key_verifications",
      "table",
    ],
    ["a schema-qualified physical table", "select * from public.key_verifications", "table"],
    ["system catalogs", "select rolname from pg_authid", "table"],
    ["information_schema", "select * from information_schema.tables", "table"],
    [
      "a catalog in a sub-select",
      "select (select count(*) from pg_class) from key_verifications_per_day_v1",
      "table",
    ],
    [
      "a real table in a sub-select of a CTE",
      "with x as (select * from (select * from keys) k) select * from x",
      "table",
    ],
    [
      "a real table behind a CTE's own name (non-recursive CTEs cannot see themselves)",
      "with keys as (select * from keys) select * from keys",
      "table",
    ],
    [
      "a CTE name used outside its scope",
      "select * from (with keys as (select 1) select 1) a, keys",
      "table",
    ],
    ["pg_sleep", "select pg_sleep(10)", "function"],
    ["pg_catalog.pg_sleep", "select pg_catalog.pg_sleep(10)", "function"],
    ["set_config", "select set_config('statement_timeout', '0', false)", "function"],
    ["current_setting", "select current_setting('search_path')", "function"],
    [
      "a function outside the allow-list",
      "select query_to_xml('select 1', true, true, '')",
      "function",
    ],
    ["a schema-qualified function", "select public.lower('x')", "function"],
    ["current_user", "select current_user", "function"],
    ["an insert", "insert into keys (id) values ('x')", "query_type"],
    ["an update", "update keys set enabled = false", "query_type"],
    ["a delete", "delete from audit_logs", "query_type"],
    ["DDL", "drop table keys", "query_type"],
    ["SET", "set statement_timeout = 0", "query_type"],
    ["several statements", "select 1; select 2", "query_type"],
    [
      "a comment hiding a second statement",
      "select 1 -- harmless\n; delete from keys",
      "query_type",
    ],
    [
      "a block comment hiding a second statement",
      "select 1 /* ; */; delete from keys",
      "query_type",
    ],
    [
      "a CTE that writes",
      "with gone as (delete from keys returning *) select * from gone",
      "query_type",
    ],
    ["SELECT INTO", "select * into stolen from key_verifications_per_day_v1", "query_type"],
    ["FOR UPDATE", "select * from key_verifications_per_day_v1 for update", "query"],
    ["FOR SHARE", "select * from key_verifications_per_day_v1 for share", "query"],
    ["a Unicode-escaped string", "select U&'\\0070g_sleep'", "query"],
    ["a Unicode-escaped identifier", 'select * from U&"\\006Beys"', "query"],
    ["a cast to regclass", "select 'pg_authid'::regclass", "query"],
    ["a parameter", "select * from key_verifications_per_day_v1 where key_id = $1", "query"],
    ["COLLATE", `select outcome collate "C" from key_verifications_per_day_v1`, "query"],
    ["an operator outside the allow-list", "select 1 OPERATOR(pg_catalog.+) 1", "query"],
    ["a syntax error", "select from where", "query"],
    ["an empty query", " ; ", "query_type"],
  ])("%s", (_, sql, kind) => {
    const r = refusal(sql);
    expect(r.kind).toBe(kind);
    expect(r.message.length).toBeGreaterThan(10);
  });

  it("names what is not allowed", () => {
    expect(refusal("select pg_sleep(1)").message).toContain("pg_sleep");
    expect(refusal("select * from pg_class").message).toContain("pg_class");
    expect(refusal("select * from key_verifications_per_day_v1 for update").message).toContain(
      "FOR UPDATE",
    );
  });

  it("refuses queries larger than 2000 nodes", () => {
    const sql = `select ${Array.from({ length: 1200 }, (_, i) => `${i} + 1`).join(", ")}`;
    expect(refusal(sql).message).toMatch(/columns|too large/);
    const wide = `select ${Array.from({ length: 1100 }, () => "1 + 1").join(" + ")}`;
    expect(refusal(wide).message).toContain("too large");
  });

  it("refuses nesting deeper than 200 levels with a refusal, not a stack overflow", () => {
    // Each `+` nests one level, and the walk goes down that spine first, so it reaches 200
    // levels long before it has counted 2,000 nodes. Before the depth bound the recursive walk
    // overflowed the stack on a cold run (RangeError, which is a 500).
    const deep = `select ${Array.from({ length: 1000 }, () => "1").join(" + ")}`;
    expect(refusal(deep).message).toMatch(/nested more than 200 levels/);
    const calls = `select ${"abs(".repeat(300)}1${")".repeat(300)}`;
    expect(refusal(calls).message).toMatch(/nested more than 200 levels/);
    const fine = `select ${Array.from({ length: 150 }, () => "1").join(" + ")}`;
    expect(() => checkQuery(fine)).not.toThrow();
  });
});
