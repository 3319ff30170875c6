// keys.createKey throughput and apis.listKeys keyset pagination, on PostgreSQL (a fresh
// database per measurement, dropped at the end). Results go to bench/results/.
//
//   BENCH_SECONDS=10        measured seconds of createKey (after a 2 s warm-up)
//   BENCH_LIST_SECONDS=8    measured seconds of each listKeys page (after a 2 s warm-up)
//   BENCH_DATABASE_URL      admin URL (default postgres://postgres@127.0.0.1:5432/test)
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { loadHttp, withDatabase, withLatchkey } from "./lib.mjs";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const listSeconds = Number(process.env.BENCH_LIST_SECONDS ?? 8);
const results = new URL("./results/", import.meta.url).pathname;
mkdirSync(results, { recursive: true });
const rootKey = "bench_root_key_0123456789abcdef";
const auth = { authorization: `Bearer ${rootKey}` };
const KEYS = 100_000;
const PAGE = 100;
const PAGE_NO = 1000;
const SEQ_ROUNDS = 500;

const round = (x) => Math.round(x * 100) / 100;

/** One JSON call; throws unless the answer is 2xx. */
async function call(base, procedure, body) {
  const res = await fetch(`${base}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${procedure}: HTTP ${res.status} ${text}`);
  return JSON.parse(text);
}

function mustBe2xx(what, r) {
  if (r.non2xx > 0 || r.errors > 0) {
    throw new Error(`${what}: ${r.non2xx} non-2xx answers and ${r.errors} errors`);
  }
}

async function benchCreateKey() {
  return withDatabase("keys", (url) =>
    withLatchkey(url, { ROOT_KEY: rootKey }, async (base) => {
      const { data } = await call(base, "apis.createApi", { name: "bench" });
      const body = JSON.stringify({
        apiId: data.apiId,
        prefix: "bench",
        name: "k",
        meta: { plan: "pro" },
        credits: { remaining: 1000 },
        ratelimits: [{ name: "requests", limit: 100, duration: 60000 }],
      });
      // A check of the body before the load: one key, as the load will create them.
      const one = await call(base, "keys.createKey", JSON.parse(body));
      if (!one.data?.keyId?.startsWith("key_"))
        throw new Error(`createKey: ${JSON.stringify(one)}`);
      const r = await loadHttp({
        url: `${base}/v2/keys.createKey`,
        body,
        headers: auth,
        connections: 20,
        seconds,
        warmupSeconds: 2,
      });
      mustBe2xx("keys.createKey", r);
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const [{ n }] = await sql`select count(*)::int as n from keys where api_id = ${data.apiId}`;
        r.keysCreated = n;
      } finally {
        await sql.end({ timeout: 5 });
      }
      return r;
    }),
  );
}

/**
 * One request at a time, page 1 and the later page alternately (so drift hits both alike):
 * the latency without queueing, p50 and p99 in ms.
 */
async function sequentialLatency(base, first, later, rounds = SEQ_ROUNDS) {
  const times = [[], []];
  const bodies = [JSON.stringify(first), JSON.stringify(later)];
  for (let i = 0; i < rounds; i++) {
    for (const j of [0, 1]) {
      const t = performance.now();
      const res = await fetch(`${base}/v2/apis.listKeys`, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth },
        body: bodies[j],
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`apis.listKeys: HTTP ${res.status}`);
      times[j].push(performance.now() - t);
    }
  }
  const pct = (xs, p) => round(xs.toSorted((a, b) => a - b)[Math.ceil((p / 100) * xs.length) - 1]);
  const [a, b] = times.map((xs) => ({ p50Ms: pct(xs, 50), p99Ms: pct(xs, 99) }));
  return { requests: rounds, page1: a, [`page${PAGE_NO}`]: b, p50Ratio: round(b.p50Ms / a.p50Ms) };
}

async function benchListKeys() {
  return withDatabase("keys", (url) =>
    withLatchkey(url, { ROOT_KEY: rootKey }, async (base) => {
      const { data } = await call(base, "apis.createApi", { name: "bench" });
      const apiId = data.apiId;
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      let cursor;
      const t0 = performance.now();
      try {
        await sql`
          insert into keys (id, workspace_id, api_id, hash, start, prefix, enabled, created_at)
          select 'key_' || lpad(g::text, 16, '0'),
            a.workspace_id, a.id,
            md5(g::text) || md5((g * 7)::text),
            'bench_' || substr(md5(g::text), 1, 4),
            'bench', true,
            (extract(epoch from now()) * 1000)::bigint
          from apis a, generate_series(1, ${KEYS}) g
          where a.id = ${apiId}`;
        await sql`vacuum (analyze) keys`;
        await sql`checkpoint`;
        const [row] = await sql`
          select id from keys
          where api_id = ${apiId} and deleted_at is null
          order by id
          offset ${(PAGE_NO - 1) * PAGE} limit 1`;
        cursor = row.id;
      } finally {
        await sql.end({ timeout: 5 });
      }
      const seedMs = Math.round(performance.now() - t0);
      console.log(`seeded ${KEYS} keys in ${seedMs} ms; page ${PAGE_NO} starts at ${cursor}`);

      const first = { apiId, limit: PAGE };
      const later = { apiId, limit: PAGE, cursor };
      // Warm up (and check) both pages once before measuring.
      for (const [body, wantFirst] of [
        [first, "key_0000000000000001"],
        [later, cursor],
      ]) {
        const page = await call(base, "apis.listKeys", body);
        if (page.data.length !== PAGE || page.data[0].keyId !== wantFirst) {
          throw new Error(
            `listKeys: ${page.data.length} keys from ${page.data[0]?.keyId}, want ${PAGE} from ${wantFirst}`,
          );
        }
      }
      const load = (body) =>
        loadHttp({
          url: `${base}/v2/apis.listKeys`,
          body: JSON.stringify(body),
          headers: auth,
          connections: 10,
          seconds: listSeconds,
          warmupSeconds: 2,
        });
      // Whichever page is measured first came out slower (the server still warming up),
      // so both pages get an unmeasured load first.
      for (const body of [first, later]) {
        mustBe2xx(
          "apis.listKeys warm-up",
          await loadHttp({
            url: `${base}/v2/apis.listKeys`,
            body: JSON.stringify(body),
            headers: auth,
            connections: 10,
            seconds: 2,
            warmupSeconds: 2,
          }),
        );
      }
      const page1 = await load(first);
      mustBe2xx("apis.listKeys page 1", page1);
      const page1000 = await load(later);
      mustBe2xx(`apis.listKeys page ${PAGE_NO}`, page1000);
      const sequential = await sequentialLatency(base, first, later);
      return {
        keys: KEYS,
        pageSize: PAGE,
        seedMs,
        page1,
        [`page${PAGE_NO}`]: { cursor, ...page1000 },
        sequential,
        ratios: {
          p50: round(page1000.p50Ms / Math.max(page1.p50Ms, 1e-9)),
          p99: round(page1000.p99Ms / Math.max(page1.p99Ms, 1e-9)),
          rps: round(page1.rps / Math.max(page1000.rps, 1e-9)),
        },
      };
    }),
  );
}

const report = {
  benchmark: "keys",
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model },
  runtime: process.version,
  database: "postgresql",
};

console.log(`\n== keys.createKey on PostgreSQL (${process.version})`);
report.createKey = await benchCreateKey();
const ck = report.createKey;
console.log(
  `createKey: ${ck.rps} req/s, p50 ${ck.p50Ms} ms, p99 ${ck.p99Ms} ms, non-2xx ${ck.non2xx}` +
    ` (${ck.connections} connections, ${ck.seconds} s; ${ck.keysCreated} keys created)`,
);

console.log(`\n== apis.listKeys at ${KEYS} keys in one API, page 1 vs page ${PAGE_NO}`);
report.listKeys = await benchListKeys();
const lk = report.listKeys;
for (const [label, r] of [
  ["page 1   ", lk.page1],
  [`page ${PAGE_NO}`, lk[`page${PAGE_NO}`]],
]) {
  console.log(`listKeys ${label}: ${r.rps} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`);
}
const sq = lk.sequential;
console.log(
  `one at a time (${sq.requests} each): page 1 p50 ${sq.page1.p50Ms} ms p99 ${sq.page1.p99Ms} ms,` +
    ` page ${PAGE_NO} p50 ${sq[`page${PAGE_NO}`].p50Ms} ms p99 ${sq[`page${PAGE_NO}`].p99Ms} ms` +
    ` (p50 ratio ${sq.p50Ratio})`,
);
const within = lk.ratios.p50 <= 2;
console.log(
  `p50 ratio page ${PAGE_NO}/page 1: ${lk.ratios.p50} (target <= 2: ${within ? "met" : "MISSED"})`,
);

const name = `keys-${report.date.slice(0, 19).replace(/[:T]/g, "-")}.json`;
writeFileSync(join(results, name), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(results, "keys-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nwrote bench/results/${name}`);
