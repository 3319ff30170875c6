import type { JsonObject } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../../../harness/server.js";
import { type Sample, seedSample } from "./sample-events.js";

// analytics.getVerifications accepts every construct the analytics documentation lists as
// allowed, one query each, run on the engine of this run against a known sample
// (sample-events.ts): the query is accepted and its result is what PostgreSQL computes.
// Functions are in query-functions.test.ts.

const s = useServer();
let sample: Sample;

beforeAll(async () => {
  sample = await seedSample(s);
});

const D = "key_verifications_per_day_v1";
const RAW = "key_verifications_v1";

/** The rows analytics.getVerifications answers, as the all-powerful root key unless given. */
async function rows(query: string, rootKey?: string): Promise<JsonObject[]> {
  const api = rootKey === undefined ? s.api : s.as(rootKey);
  return (await api.analytics.getVerifications({ query })).data;
}

/** `[construct, query, rows]`; `%A%` and `%B%` stand for the ids of API A and API B. */
type Case = [string, string, unknown[]];

function run(cases: Case[]) {
  it.each(cases)("%s", async (_, sql, expected) => {
    const text = sql.replaceAll("%A%", sample.apiA).replaceAll("%B%", sample.apiB);
    expect(await rows(text)).toEqual(expected);
  });
}

describe("statements", () => {
  run([
    ["one SELECT", `select count(*)::int as n from ${RAW}`, [{ n: 7 }]],
    [
      "a CTE of a SELECT",
      `with v as (select outcome, count from ${D}) select sum(count)::int as n from v where outcome = 'VALID'`,
      [{ n: 6 }],
    ],
    [
      "WITH RECURSIVE",
      "with recursive r(n) as (select 1 union all select n + 1 from r where n < 3) select sum(n)::int as s from r",
      [{ s: 6 }],
    ],
    [
      "a sub-select in FROM",
      `select count(*)::int as n from (select distinct key_id from ${RAW}) as k`,
      [{ n: 3 }],
    ],
    [
      "a scalar sub-select",
      `select outcome from ${D} where count = (select max(count) from ${D})`,
      [{ outcome: "VALID" }],
    ],
    [
      "EXISTS",
      `select count(*)::int as n from ${D} d where exists (select 1 from ${RAW} r where r.key_id = d.key_id and r.outcome <> 'VALID')`,
      [{ n: 2 }],
    ],
    [
      "UNION",
      `select coalesce(external_id, 'none') as e from ${D} where outcome <> 'VALID'
       union select coalesce(external_id, 'none') from ${D} where api_id = '%B%' order by e`,
      [{ e: "alice" }, { e: "none" }],
    ],
    [
      "UNION ALL",
      `select outcome from ${D} where count = 3 union all select outcome from ${D} where count = 3`,
      [{ outcome: "VALID" }, { outcome: "VALID" }],
    ],
    [
      "a join",
      `select a.outcome, b.outcome as other from ${D} a join ${D} b
       on a.key_id = b.key_id and a.outcome < b.outcome`,
      [{ outcome: "INSUFFICIENT_PERMISSIONS", other: "VALID" }],
    ],
    [
      "a left join of two tables",
      `select d.count, count(r.request_id)::int as raw from ${D} d left join ${RAW} r
       on r.key_id = d.key_id and r.outcome = d.outcome and d.count > 2
       group by d.key_id, d.outcome, d.count order by d.count desc, raw desc`,
      [
        { count: 3, raw: 3 },
        { count: 2, raw: 0 },
        { count: 1, raw: 0 },
        { count: 1, raw: 0 },
      ],
    ],
    [
      "GROUP BY, HAVING, ORDER BY, LIMIT and OFFSET",
      `select outcome, sum(count)::int as n from ${D} group by outcome having sum(count) > 0
       order by n desc limit 1 offset 1`,
      [{ outcome: "INSUFFICIENT_PERMISSIONS", n: 1 }],
    ],
    [
      "an aggregate with FILTER (the public system's countIf)",
      `select count(*) filter (where outcome = 'VALID')::int as n from ${D}`,
      [{ n: 3 }],
    ],
    ["VALUES", "select n from (values (1), (2)) as v(n) order by n desc", [{ n: 2 }, { n: 1 }]],
  ]);
});

describe("expressions", () => {
  run([
    [
      "CASE",
      `select sum(case when outcome = 'VALID' then count else 0 end)::int as valid from ${D}`,
      [{ valid: 6 }],
    ],
    [
      "COALESCE",
      `select coalesce(external_id, 'anonymous') as who, sum(count)::int as n from ${D} group by 1 order by 1`,
      [
        { who: "alice", n: 4 },
        { who: "anonymous", n: 2 },
        { who: "bob", n: 1 },
      ],
    ],
    ["NULLIF", `select count(nullif(outcome, 'VALID'))::int as n from ${D}`, [{ n: 1 }]],
    [
      "GREATEST and LEAST",
      `select greatest(max(count), 2)::int as g, least(min(count), 2)::int as l from ${D}`,
      [{ g: 3, l: 1 }],
    ],
    ["IS NULL", `select count(*)::int as n from ${D} where external_id is null`, [{ n: 1 }]],
    [
      "IS NOT NULL",
      `select count(*)::int as n from ${D} where external_id is not null`,
      [{ n: 3 }],
    ],
    [
      "IS DISTINCT FROM",
      `select count(*)::int as n from ${D} where external_id is distinct from 'bob'`,
      [{ n: 3 }],
    ],
    [
      "AND, OR and NOT",
      `select count(*)::int as n from ${D} where (count = 1 or count = 3) and not external_id = 'bob'`,
      [{ n: 2 }],
    ],
    ["an array subscript", `select tags[1] as t from ${D} where count = 3`, [{ t: "path=/a" }]],
  ]);
});

describe("operators", () => {
  const where = (cond: string, n: number): Case => [
    `WHERE ${cond}`,
    `select count(*)::int as n from ${D} where ${cond}`,
    [{ n }],
  ];
  run([
    where("count = 3", 1),
    where("count <> 3", 3),
    where("count != 3", 3),
    where("count < 2", 2),
    where("count > 1", 2),
    where("count <= 2", 3),
    where("count >= 2", 2),
    [
      "+ - * / % ||",
      `select (sum(count) + 1)::int as a, (sum(count) - 1)::int as s, (sum(count) * 2)::int as m,
       sum(count)::int / 2 as d, sum(count)::int % 4 as r, 'n=' || sum(count) as c from ${D}`,
      [{ a: 8, s: 6, m: 14, d: 3, r: 3, c: "n=7" }],
    ],
    where("external_id like 'al%'", 2),
    where("external_id not like 'al%'", 1),
    where("external_id ilike 'AL%'", 2),
    where("external_id not ilike 'AL%'", 1),
    where("external_id ~ '^b'", 1),
    where("external_id ~* '^B'", 1),
    where("external_id !~ '^b'", 2),
    where("external_id !~* '^B'", 2),
    where("tags @> array['path=/a']", 1),
    where("tags <@ array['path=/a', 'region=eu', 'x']", 3),
    where("tags && array['path=/b', 'x']", 1),
    where("outcome in ('INSUFFICIENT_PERMISSIONS', 'RATE_LIMITED')", 1),
    where("outcome not in ('INSUFFICIENT_PERMISSIONS', 'RATE_LIMITED')", 3),
    where("api_id in ('%A%', '%B%')", 4),
    where(`key_id in (select key_id from ${RAW} where outcome <> 'VALID')`, 2),
    where("count between 2 and 3", 2),
    where("count not between 2 and 3", 2),
    where("count between symmetric 3 and 2", 2),
    where("'path=/a' = any (tags)", 1),
    where("outcome = any (array['INSUFFICIENT_PERMISSIONS', 'RATE_LIMITED'])", 1),
    where("count > all (array[1, 2])", 1),
    where(`count >= all (select count from ${D})`, 1),
    where(`key_id = any (select key_id from ${RAW} where outcome <> 'VALID')`, 2),
  ]);
});

describe("casts", () => {
  const cast = (type: string, value: string, expected: unknown): Case => [
    `to ${type}`,
    `select ${value}::${type} as v from ${D} where external_id = 'bob'`,
    [{ v: expected }],
  ];
  run([
    cast("text", "count", "1"),
    cast("varchar(3)", "outcome", "VAL"),
    cast("smallint", "'7'", 7),
    cast("int", "'7'", 7),
    cast("integer", "'7'", 7),
    cast("bigint", "'7'", 7),
    cast("int2", "'7'", 7),
    cast("int4", "'7'", 7),
    cast("int8", "'7'", 7),
    cast("numeric(4, 1)", "'7.25'", 7.3),
    cast("decimal", "'7.25'", 7.25),
    cast("real", "'0.5'", 0.5),
    cast("float4", "'0.5'", 0.5),
    cast("float8", "'0.5'", 0.5),
    cast("boolean", "'yes'", true),
    cast("bool", "'no'", false),
    cast("date", "'2026-01-02'", "2026-01-02"),
    cast("time", "'03:04:05'", "03:04:05"),
    cast("timestamp", "'2026-01-02 03:04:05'", "2026-01-02T03:04:05"),
    cast("timestamptz", "'2026-01-02 03:04:05+01'", "2026-01-02T02:04:05+00:00"),
    cast("interval", "'36 hours'", "36:00:00"),
    [
      "CAST(... AS ...)",
      `select cast(count as text) as v from ${D} where external_id = 'bob'`,
      [{ v: "1" }],
    ],
  ]);
});

describe("time", () => {
  run([
    [
      "now() - interval (the public system's relative ranges)",
      `select count(*)::int as n from ${D} where time >= now() - interval '30 days'`,
      [{ n: 4 }],
    ],
    [
      "current_date and current_timestamp",
      "select current_date = (now() at time zone 'UTC')::date as d, current_timestamp = now() as t",
      [{ d: true, t: true }],
    ],
    [
      "the raw tables' Unix-ms times",
      `select count(*)::int as n from ${RAW} where to_timestamp(time / 1000.0) >= now() - interval '1 day'`,
      [{ n: 7 }],
    ],
  ]);
});

describe("IN and ANY lists naming another tenant's ids", () => {
  it("see none of another workspace's rows", async () => {
    const ids = `'${sample.foreignApi}', '${sample.apiA}'`;
    for (const cond of [`api_id in (${ids})`, `api_id = any (array[${ids}])`]) {
      expect(await rows(`select count(*)::int as n from ${RAW} where ${cond}`)).toEqual([{ n: 5 }]);
    }
  });

  it("see none of the rows of APIs an API-scoped root key may not read", async () => {
    const scoped = await s.seed.rootKey([`api.${sample.apiB}.read_analytics`]);
    const ids = `'${sample.apiA}', '${sample.apiB}', '${sample.foreignApi}'`;
    for (const cond of [`api_id in (${ids})`, `api_id = any (array[${ids}])`]) {
      const sql = `select api_id, count(*)::int as n from ${RAW} where ${cond} group by api_id`;
      expect(await rows(sql, scoped)).toEqual([{ api_id: sample.apiB, n: 2 }]);
    }
  });
});
