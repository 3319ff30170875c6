// analytics.getVerifications at scale: verification events loaded with COPY into a fresh
// PostgreSQL database (30 days, 10 APIs, 1,000 keys, 200 identities, 5 outcomes, 3 tag sets,
// the same pseudo-random data every run), the rollups built from them as the event writer
// would, then queries timed through the /v2 door, one at a time.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { call } from "../lib/api.ts";
import { type Sql, withDatabase, withSql } from "../lib/database.ts";
import { ms, num, table, verdict } from "../lib/markdown.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { withLatchkey } from "../lib/server.ts";
import { percentile, round, summarize } from "../lib/stats.ts";

export interface AnalyticsSettings {
  events: number;
  runs: number;
  warmupRuns: number;
}

export interface QueryTiming {
  name: string;
  targetMs: number | null;
  p50Ms: number | null;
  p95Ms: number | null;
  maxMs: number | null;
  rows: number;
}

export interface AnalyticsResult {
  loaded: {
    copySeconds: number;
    eventsPerSecond: number;
    rollupBuildSeconds: number;
    rollupRows: Record<string, number>;
    sizes: { table: string; size: string }[];
  };
  queries: QueryTiming[];
}

const DAY = 86_400_000;
const DAYS = 30;
const APIS = 10;
const KEYS = 1000;
const IDENTITIES = 200;
const OUTCOMES: [string, number][] = [
  ["VALID", 0.9],
  ["RATE_LIMITED", 0.05],
  ["USAGE_EXCEEDED", 0.03],
  ["DISABLED", 0.01],
  ["EXPIRED", 0.01],
];
const TAGS = ["{}", "{path=/v1/a}", "{path=/v1/b}"];

/** mulberry32: every run loads the same data. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function* eventRows(events: number, workspaceId: string, fromMs: number) {
  const next = random(42);
  let chunk = "";
  for (let i = 0; i < events; i++) {
    const key = Math.floor(next() * KEYS);
    const identity = key % IDENTITIES;
    let r = next();
    let outcome = "VALID";
    for (const [o, p] of OUTCOMES) {
      if (r < p) {
        outcome = o;
        break;
      }
      r -= p;
    }
    const time = fromMs + Math.floor(next() * DAYS * DAY);
    const tags = TAGS[Math.floor(next() * TAGS.length)];
    const spent = outcome === "VALID" ? 1 : 0;
    chunk += `${time}\t${workspaceId}\tapi_${key % APIS}\tkey_${key}\tid_${identity}\tuser_${identity}\t${outcome}\t${tags}\t${spent}\treq_${i}\n`;
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = "";
    }
  }
  if (chunk) yield chunk;
}

const dayName = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll("-", "");

const BUCKETS = {
  minute: "to_timestamp(floor(time / 60000.0) * 60)",
  hour: "to_timestamp(floor(time / 3600000.0) * 3600)",
  day: "to_timestamp(floor(time / 86400000.0) * 86400)",
  month: "date_trunc('month', to_timestamp(time / 1000.0) at time zone 'UTC') at time zone 'UTC'",
};

async function load(sql: Sql, events: number, workspaceId: string, fromMs: number) {
  for (let d = Math.floor(fromMs / DAY); d <= Math.floor((fromMs + DAYS * DAY) / DAY); d++) {
    const from = d * DAY;
    await sql.unsafe(
      `create table if not exists key_verifications_${dayName(from)} partition of key_verifications
         for values from (${from}) to (${from + DAY})`,
    );
    await sql.unsafe(
      `create table if not exists verifications_per_minute_${dayName(from)} partition of verifications_per_minute
         for values from ('${new Date(from).toISOString()}') to ('${new Date(from + DAY).toISOString()}')`,
    );
  }
  let started = performance.now();
  const copy = await sql`copy key_verifications (time, workspace_id, api_id, key_id, identity_id,
    external_id, outcome, tags, spent_credits, request_id) from stdin`.writable();
  await pipeline(Readable.from(eventRows(events, workspaceId, fromMs)), copy);
  const copySeconds = (performance.now() - started) / 1000;
  started = performance.now();
  for (const [g, expr] of Object.entries(BUCKETS)) {
    await sql.unsafe(
      `insert into verifications_per_${g} (time, workspace_id, api_id, key_id, identity_id,
         external_id, outcome, tags, count, spent_credits)
       select ${expr}, workspace_id, api_id, key_id, identity_id, max(external_id), outcome, tags,
         count(*), sum(spent_credits)
       from key_verifications
       group by 1, workspace_id, api_id, key_id, identity_id, outcome, tags`,
    );
  }
  await sql.unsafe("analyze");
  const rollupSeconds = (performance.now() - started) / 1000;
  const sizes = await sql<{ table: string; size: string }[]>`
    select t as table, pg_size_pretty(sum(pg_total_relation_size(c.oid))) as size
    from unnest(array['key_verifications', 'verifications_per_minute', 'verifications_per_hour',
      'verifications_per_day', 'verifications_per_month']) as t
    join pg_class c on c.relkind = 'r' and (c.relname = t or c.relname ~ ('^' || t || '_[0-9]{8}$'))
    group by t order by t`;
  const rollupRows: Record<string, number> = {};
  for (const g of Object.keys(BUCKETS)) {
    const [row] = await sql.unsafe(`select count(*)::int as n from verifications_per_${g}`);
    rollupRows[g] = Number(row?.n);
  }
  return {
    copySeconds: round(copySeconds),
    eventsPerSecond: Math.round(events / copySeconds),
    rollupBuildSeconds: round(rollupSeconds),
    rollupRows,
    sizes: sizes.map((s) => ({ table: s.table, size: s.size })),
  };
}

async function timeQuery(
  base: string,
  s: AnalyticsSettings,
  name: string,
  targetMs: number | null,
  query: string,
): Promise<QueryTiming> {
  const once = async () => {
    const t = performance.now();
    const rows = await call(base, "analytics.getVerifications", { query });
    return { ms: performance.now() - t, rows: rows.length as number };
  };
  for (let i = 0; i < s.warmupRuns; i++) await once();
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < s.runs; i++) {
    const r = await once();
    times.push(r.ms);
    rows = r.rows;
  }
  const t = summarize(times, 2);
  const p95 = percentile(
    times.toSorted((a, b) => a - b),
    95,
  );
  const p95Ms = p95 === null ? null : round(p95);
  console.log(`${name}: p50 ${t.p50Ms} ms, p95 ${p95Ms} ms`);
  return {
    name,
    targetMs,
    p50Ms: t.p50Ms,
    p95Ms,
    maxMs: t.maxMs,
    rows,
  };
}

export default defineScenario<AnalyticsSettings, AnalyticsResult>({
  name: "analytics",
  description: "analytics.getVerifications over millions of events and their rollups (PostgreSQL)",
  settings: ({ quick, args }) => {
    noArgs("analytics", args);
    return {
      events: setting("BENCH_EVENTS", 10_000_000, 100_000, quick),
      runs: setting("BENCH_RUNS", 30, 5, quick),
      warmupRuns: quick ? 1 : 5,
    };
  },
  async run({ settings: s }) {
    const fromMs = Math.floor((Date.now() - DAYS * DAY) / DAY) * DAY + DAY;
    return withDatabase("analytics", (db) =>
      withLatchkey({ databaseUrl: db.url }, async (lk) => {
        const loaded = await withSql(db.url, async (sql) => {
          const [ws] = await sql`select id from workspaces where is_default`;
          console.log(`loading ${s.events} events ...`);
          return load(sql, s.events, String(ws?.id), fromMs);
        });
        console.log(JSON.stringify(loaded));
        const day = fromMs + 10 * DAY;
        const queries = [
          await timeQuery(
            lk.base,
            s,
            "per day and outcome, one API, 30 days (day rollup)",
            100,
            `select date_trunc('day', time) as day, outcome, sum(count)::bigint as n
             from key_verifications_per_day_v1
             where api_id = 'api_3' and time >= now() - interval '30 days'
             group by 1, 2 order by 1, 2`,
          ),
          await timeQuery(
            lk.base,
            s,
            "top 10 identities this month (month rollup)",
            null,
            `select external_id, sum(count)::bigint as total from key_verifications_per_month_v1
             where time >= date_trunc('month', now()) group by external_id
             order by total desc limit 10`,
          ),
          await timeQuery(
            lk.base,
            s,
            "one key, one day, by outcome (raw events)",
            200,
            `select outcome, count(*) as n, sum(spent_credits) as spent from key_verifications_v1
             where key_id = 'key_17' and time >= ${day} and time < ${day + DAY}
             group by outcome order by outcome`,
          ),
        ];
        return { loaded, queries };
      }),
    );
  },
  render(r, s) {
    const l = r.loaded;
    return [
      table(
        ["query", "target:", "p50:", "p95:", ""],
        r.queries.map((q) => [
          q.name,
          q.targetMs === null ? "" : `< ${q.targetMs} ms`,
          ms(q.p50Ms, 1),
          ms(q.p95Ms, 1),
          q.targetMs === null ? "" : verdict((q.p50Ms ?? Infinity) < q.targetMs),
        ]),
      ),
      `${num(s.events, 0)} events loaded with COPY in ${num(l.copySeconds, 0)} s (${num(l.eventsPerSecond, 0)} events/s), rollups built in ${num(l.rollupBuildSeconds, 0)} s: ${Object.entries(
        l.rollupRows,
      )
        .map(([g, n]) => `${num(n, 0)} ${g}`)
        .join(", ")} rows; sizes ${l.sizes.map((x) => `${x.table} ${x.size}`).join(", ")}.`,
    ].join("\n\n");
  },
});
