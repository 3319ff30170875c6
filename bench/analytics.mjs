// analytics.getVerifications at scale: 10M verification events loaded with COPY into a fresh
// PostgreSQL database (30 days, 10 APIs, 1000 keys, 200 identities), the rollups built from
// them, then queries timed through the /v2 JSON door. Results go to bench/results/.
//
//   BENCH_EVENTS=10000000   events to load
//   BENCH_RUNS=30           measured runs of each query (after 5 warm-up runs)
//   BENCH_DATABASE_URL      admin URL (default postgres://postgres@127.0.0.1:5432/test)
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import postgres from "postgres";
import { withDatabase, withLatchkey } from "./lib.mjs";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const results = new URL("./results/", import.meta.url).pathname;
mkdirSync(results, { recursive: true });
const rootKey = "bench_root_key_0123456789abcdef";
const DAY = 86_400_000;
const DAYS = 30;
const APIS = 10;
const KEYS = 1000;
const IDENTITIES = 200;
const OUTCOMES = [
  ["VALID", 0.9],
  ["RATE_LIMITED", 0.05],
  ["USAGE_EXCEEDED", 0.03],
  ["DISABLED", 0.01],
  ["EXPIRED", 0.01],
];
const TAGS = ["{}", "{path=/v1/a}", "{path=/v1/b}"];

const round = (x) => Math.round(x * 100) / 100;

/** A deterministic pseudo-random sequence (mulberry32), so every run loads the same data. */
function random(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** COPY text rows of key_verifications, in chunks. */
function* eventRows(workspaceId, fromMs) {
  const next = random(42);
  let chunk = "";
  for (let i = 0; i < EVENTS; i++) {
    const key = Math.floor(next() * KEYS);
    const api = key % APIS;
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
    chunk += `${time}\t${workspaceId}\tapi_${api}\tkey_${key}\tid_${identity}\tuser_${identity}\t${outcome}\t${tags}\t${spent}\treq_${i}\n`;
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = "";
    }
  }
  if (chunk) yield chunk;
}

const dayName = (ms) => new Date(ms).toISOString().slice(0, 10).replaceAll("-", "");

/** Loads the events with COPY and builds every rollup from them, as the event writer would. */
async function load(sql, workspaceId, fromMs) {
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
  await pipeline(Readable.from(eventRows(workspaceId, fromMs)), copy);
  const copySeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const bucket = {
    minute: "to_timestamp(floor(time / 60000.0) * 60)",
    hour: "to_timestamp(floor(time / 3600000.0) * 3600)",
    day: "to_timestamp(floor(time / 86400000.0) * 86400)",
    month: "date_trunc('month', to_timestamp(time / 1000.0) at time zone 'UTC') at time zone 'UTC'",
  };
  for (const [g, expr] of Object.entries(bucket)) {
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
  const sizes = await sql`
    select t as table, pg_size_pretty(sum(pg_total_relation_size(c.oid))) as size
    from unnest(array['key_verifications', 'verifications_per_minute', 'verifications_per_hour',
      'verifications_per_day', 'verifications_per_month']) as t
    join pg_class c on c.relkind = 'r' and (c.relname = t or c.relname ~ ('^' || t || '_[0-9]{8}$'))
    group by t order by t`;
  const rows = {};
  for (const g of Object.keys(bucket)) {
    const [{ n }] = await sql.unsafe(`select count(*)::int as n from verifications_per_${g}`);
    rows[g] = n;
  }
  return {
    copySeconds: round(copySeconds),
    eventsPerSecond: Math.round(EVENTS / copySeconds),
    rollupBuildSeconds: round(rollupSeconds),
    rollupRows: rows,
    sizes: sizes.map((s) => ({ table: s.table, size: s.size })),
  };
}

/** Times one query through the JSON door: warm-up, then RUNS sequential runs. */
async function timeQuery(base, name, query) {
  const run = async () => {
    const started = performance.now();
    const res = await fetch(`${base}/v2/analytics.getVerifications`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
      body: JSON.stringify({ query }),
    });
    const body = await res.json();
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${JSON.stringify(body)}`);
    return { ms, rows: body.data.length, sample: body.data[0] };
  };
  for (let i = 0; i < 5; i++) await run();
  const times = [];
  let last;
  for (let i = 0; i < RUNS; i++) {
    last = await run();
    times.push(last.ms);
  }
  times.sort((a, b) => a - b);
  const at = (q) => round(times[Math.min(times.length - 1, Math.floor(q * times.length))]);
  return {
    name,
    query,
    runs: RUNS,
    p50Ms: at(0.5),
    p95Ms: at(0.95),
    maxMs: at(1),
    rows: last.rows,
    sample: last.sample,
  };
}

async function main() {
  const now = Date.now();
  const fromMs = Math.floor((now - DAYS * DAY) / DAY) * DAY + DAY;
  const out = await withDatabase("analytics", (url) =>
    withLatchkey(url, { ROOT_KEY: rootKey }, async (base) => {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const [{ workspace_id: workspaceId }] =
          await sql`select id as workspace_id from workspaces where is_default`;
        console.log(`loading ${EVENTS} events ...`);
        const loaded = await load(sql, workspaceId, fromMs);
        console.log(JSON.stringify(loaded));
        const day = fromMs + 10 * DAY;
        const queries = [
          await timeQuery(
            base,
            "per day and outcome, one API, 30 days (rollup)",
            `select date_trunc('day', time) as day, outcome, sum(count)::bigint as n
             from key_verifications_per_day_v1
             where api_id = 'api_3' and time >= now() - interval '30 days'
             group by 1, 2 order by 1, 2`,
          ),
          await timeQuery(
            base,
            "top 10 identities this month (rollup)",
            `select external_id, sum(count)::bigint as total from key_verifications_per_month_v1
             where time >= date_trunc('month', now()) group by external_id
             order by total desc limit 10`,
          ),
          await timeQuery(
            base,
            "one key, one day, by outcome (raw)",
            `select outcome, count(*) as n, sum(spent_credits) as spent from key_verifications_v1
             where key_id = 'key_17' and time >= ${day} and time < ${day + DAY}
             group by outcome order by outcome`,
          ),
        ];
        for (const q of queries) console.log(`${q.name}: p50 ${q.p50Ms} ms, p95 ${q.p95Ms} ms`);
        return { loaded, queries };
      } finally {
        await sql.end({ timeout: 5 });
      }
    }),
  );
  const result = {
    benchmark: "analytics.getVerifications",
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model },
    runtime: process.version,
    data: {
      events: EVENTS,
      days: DAYS,
      apis: APIS,
      keys: KEYS,
      identities: IDENTITIES,
      tagVariants: TAGS.length,
    },
    targets: { rollupPerDayMs: 100, rawOneKeyOneDayMs: 200 },
    ...out,
  };
  const stamp = result.date.replace(/[:.]/g, "-").slice(0, 19);
  writeFileSync(join(results, `analytics-${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(results, "analytics-latest.json"), `${JSON.stringify(result, null, 2)}\n`);
}

await main();
