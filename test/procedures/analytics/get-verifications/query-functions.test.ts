import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../../../harness/server.js";
import { seedSample } from "./sample-events.js";

// analytics.getVerifications accepts every function the analytics documentation lists as
// allowed, one query each over the sample of sample-events.ts, run on the engine of this run:
// the query is accepted and its result is what PostgreSQL computes.

const s = useServer();

beforeAll(async () => {
  await seedSample(s);
});

const D = "key_verifications_per_day_v1";
/** The window order of the sample's day rows: counts 3, 2, 1 (alice), 1 (bob). */
const ORDER = "count desc, outcome, coalesce(external_id, '')";

type Case = [string, string, unknown[]];

function run(cases: Case[]) {
  it.each(cases)("%s", async (_, query, expected) => {
    const res = await s.api.analytics.getVerifications({ query });
    expect(res.data).toEqual(expected);
  });
}

/** One aggregate over the four day rows. */
const agg = (name: string, expr: string, v: unknown): Case => [
  name,
  `select ${expr} as v from ${D}`,
  [{ v }],
];
/** A window function over the day rows, in the order of ORDER. */
const win = (name: string, expr: string, vs: unknown[]): Case => [
  name,
  `select ${expr} as v from ${D} order by ${ORDER}`,
  vs.map((v) => ({ v })),
];
/** A function on bob's single day row (count 1, outcome VALID, external_id bob). */
const one = (name: string, expr: string, v: unknown): Case => [
  name,
  `select ${expr} as v from ${D} where external_id = 'bob'`,
  [{ v }],
];
/** A function on alice's VALID day row (count 3, tags {path=/a, region=eu}). */
const tagged = (name: string, expr: string, vs: unknown[]): Case => [
  name,
  `select ${expr} as v from ${D} where count = 3`,
  vs.map((v) => ({ v })),
];
const T = "timestamptz '2026-01-02 03:04:05+00'";

describe("aggregates", () => {
  run([
    agg("count", "count(*)", 4),
    agg("count distinct", "count(distinct key_id)", 3),
    agg("sum", "sum(count)", 7),
    agg("avg", "avg(count)", 1.75),
    agg("min", "min(count)", 1),
    agg("max", "max(count)", 3),
    agg("array_agg", "array_agg(distinct outcome order by outcome)", [
      "INSUFFICIENT_PERMISSIONS",
      "VALID",
    ]),
    agg(
      "string_agg",
      "string_agg(coalesce(external_id, 'none'), ',' order by coalesce(external_id, 'none'))",
      "alice,alice,bob,none",
    ),
    agg("bool_and", "bool_and(count > 0)", true),
    agg("bool_or", "bool_or(count > 2)", true),
    agg("every", "every(count > 1)", false),
    agg("percentile_cont", "percentile_cont(0.5) within group (order by count)", 1.5),
    agg("percentile_disc", "percentile_disc(0.5) within group (order by count)", 1),
    agg("mode", "mode() within group (order by outcome)", "VALID"),
    agg("stddev", "round(stddev(count), 4)", 0.9574),
    agg("stddev_pop", "round(stddev_pop(count), 4)", 0.8292),
    agg("stddev_samp", "round(stddev_samp(count), 4)", 0.9574),
    agg("variance", "round(variance(count), 4)", 0.9167),
  ]);
});

describe("window functions", () => {
  run([
    win("row_number", `row_number() over (order by ${ORDER})`, [1, 2, 3, 4]),
    win("rank", "rank() over (order by count desc)", [1, 2, 3, 3]),
    win("dense_rank", "dense_rank() over (order by count desc)", [1, 2, 3, 3]),
    win(
      "percent_rank",
      "round(percent_rank() over (order by count desc)::numeric, 2)",
      [0, 0.33, 0.67, 0.67],
    ),
    win("cume_dist", "cume_dist() over (order by count desc)", [0.25, 0.5, 1, 1]),
    win("ntile", `ntile(2) over (order by ${ORDER})`, [1, 1, 2, 2]),
    win("lag", `lag(count) over (order by ${ORDER})`, [null, 3, 2, 1]),
    win("lead", `lead(count) over (order by ${ORDER})`, [2, 1, 1, null]),
    win("first_value", `first_value(count) over (order by ${ORDER})`, [3, 3, 3, 3]),
    win(
      "last_value",
      `last_value(count) over (order by ${ORDER} rows between unbounded preceding and unbounded following)`,
      [1, 1, 1, 1],
    ),
    win(
      "nth_value",
      `nth_value(count, 2) over (order by ${ORDER} rows between unbounded preceding and unbounded following)`,
      [2, 2, 2, 2],
    ),
    win("an aggregate over a partition", "sum(count) over (partition by api_id)", [5, 2, 5, 5]),
  ]);
});

describe("time functions", () => {
  run([
    one("now", "now() >= time", true),
    one("date_trunc", `date_trunc('day', ${T})`, "2026-01-02T00:00:00+00:00"),
    one("date_part", `date_part('hour', ${T})`, 3),
    one("extract", `extract(minute from ${T})`, 4),
    one(
      "date_bin",
      `date_bin('15 minutes', ${T} + interval '16 minutes', timestamptz '2026-01-01 00:00:00+00')`,
      "2026-01-02T03:15:00+00:00",
    ),
    one("to_timestamp", "to_timestamp(86400)", "1970-01-02T00:00:00+00:00"),
    one("to_char", `to_char(${T}, 'YYYY-MM-DD HH24:MI')`, "2026-01-02 03:04"),
    one("make_interval", "make_interval(0, 0, 0, 2)", "2 days"),
    one("timezone", `timezone('Europe/Paris', ${T})`, "2026-01-02T04:04:05"),
    one("AT TIME ZONE", `${T} at time zone 'Europe/Paris'`, "2026-01-02T04:04:05"),
    one("age", "age(timestamp '2026-03-02', timestamp '2026-01-01')", "2 mons 1 day"),
  ]);
});

describe("text functions", () => {
  run([
    one("lower", "lower('BoB')", "bob"),
    one("upper", "upper(external_id)", "BOB"),
    one("length", "length(external_id)", 3),
    one("char_length", "char_length(outcome)", 5),
    one("substring", "substring(outcome from 2 for 3)", "ALI"),
    one("substring with arguments", "substring(outcome, 2, 3)", "ALI"),
    one("substr", "substr(outcome, 2, 3)", "ALI"),
    one("concat", "concat(external_id, '-', count)", "bob-1"),
    one("concat_ws", "concat_ws('/', external_id, outcome)", "bob/VALID"),
    one("trim", "trim('  x  ')", "x"),
    one("trim leading", "trim(leading 'x' from 'xxbxx')", "bxx"),
    one("trim trailing", "trim(trailing 'x' from 'xxbxx')", "xxb"),
    one("btrim", "btrim('xxbxx', 'x')", "b"),
    one("ltrim", "ltrim('xxb', 'x')", "b"),
    one("rtrim", "rtrim('bxx', 'x')", "b"),
    one("starts_with", "starts_with(outcome, 'VA')", true),
    one("left", "left(outcome, 2)", "VA"),
    one("right", "right(outcome, 2)", "ID"),
    one("replace", "replace(outcome, 'A', '4')", "V4LID"),
    one("split_part", "split_part('path=/a', '=', 2)", "/a"),
    one("strpos", "strpos(outcome, 'L')", 3),
    one("position", "position('L' in outcome)", 3),
    one("lpad", "lpad(count::text, 3, '0')", "001"),
    one("rpad", "rpad(count::text, 3, '0')", "100"),
  ]);
});

describe("number functions", () => {
  run([
    one("round", "round(2.567, 2)", 2.57),
    one("floor", "floor(2.5)", 2),
    one("ceil", "ceil(2.1)", 3),
    one("ceiling", "ceiling(2.1)", 3),
    one("abs", "abs(count - 3)", 2),
    one("trunc", "trunc(2.79, 1)", 2.7),
    one("sign", "sign(count - 3)", -1),
    one("div", "div(7, 2)", 3),
    one("mod", "mod(7, 2)", 1),
  ]);
});

describe("array functions", () => {
  run([
    tagged("array_length", "array_length(tags, 1)", [2]),
    tagged("cardinality", "cardinality(tags)", [2]),
    tagged("unnest", "unnest(tags)", ["path=/a", "region=eu"]),
    tagged("array_to_string", "array_to_string(tags, ',')", ["path=/a,region=eu"]),
    tagged("array_position", "array_position(tags, 'region=eu')", [2]),
    [
      "unnest in FROM, grouped by tag",
      `select tag, sum(count)::int as n from ${D}, unnest(tags) as tag group by tag order by tag`,
      [
        { tag: "path=/a", n: 3 },
        { tag: "path=/b", n: 2 },
        { tag: "region=eu", n: 3 },
      ],
    ],
  ]);
});
