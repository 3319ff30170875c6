// keys.createKey throughput, and apis.listKeys keyset pagination (a late page against the
// first over many keys in one API), on PostgreSQL, a fresh database per measurement.
import { authorization, call } from "../lib/api.ts";
import { withDatabase, withSql } from "../lib/database.ts";
import { type AutocannonResult, autocannonLoad } from "../lib/load/closed-loop.ts";
import { ms, num, table, verdict } from "../lib/markdown.ts";
import { defineScenario, noArgs, type RunContext, setting } from "../lib/scenario.ts";
import { withLatchkey } from "../lib/server.ts";
import { type LatencySummary, ratio, summarize } from "../lib/stats.ts";

export interface KeysSettings {
  seconds: number;
  listSeconds: number;
  /** Keys seeded in one API for listKeys. */
  keys: number;
  pageSize: number;
  /** The late page measured against the first. */
  page: number;
  /** One-at-a-time requests of each page. */
  sequentialRounds: number;
}

export interface KeysResult {
  createKey: AutocannonResult & { keysCreated: number };
  listKeys: {
    seedMs: number;
    cursor: string;
    firstPage: AutocannonResult;
    latePage: AutocannonResult;
    sequential: { firstPage: LatencySummary; latePage: LatencySummary; p50Ratio: number | null };
    p50Ratio: number | null;
  };
}

const TARGET = 2;

async function createKey(context: RunContext<KeysSettings>) {
  return withDatabase("keys", (db) =>
    withLatchkey({ databaseUrl: db.url }, async (lk) => {
      const { apiId } = await call(lk.base, "apis.createApi", { name: "bench" });
      const fields = {
        apiId,
        prefix: "bench",
        name: "k",
        meta: { plan: "pro" },
        credits: { remaining: 1000 },
        ratelimits: [{ name: "requests", limit: 100, duration: 60000 }],
      };
      const one = await call(lk.base, "keys.createKey", fields);
      context.check(String(one.keyId).startsWith("key_"), `createKey: ${JSON.stringify(one)}`);
      const r = await autocannonLoad({
        url: `${lk.base}/v2/keys.createKey`,
        body: JSON.stringify(fields),
        headers: authorization(),
        connections: 20,
        seconds: context.settings.seconds,
      });
      context.check(
        r.non2xx === 0 && r.errors === 0,
        `createKey: ${r.non2xx} non-2xx, ${r.errors} errors`,
      );
      const keysCreated = await withSql(db.url, async (sql) => {
        const [row] = await sql`select count(*)::int as n from keys where api_id = ${apiId}`;
        return Number(row?.n);
      });
      console.log(`createKey: ${r.rps} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`);
      return { ...r, keysCreated };
    }),
  );
}

async function seedKeys(url: string, apiId: string, s: KeysSettings): Promise<string> {
  return withSql(url, async (sql) => {
    await sql`
      insert into keys (id, workspace_id, api_id, hash, start, prefix, enabled, created_at)
      select 'key_' || lpad(g::text, 16, '0'), a.workspace_id, a.id,
        md5(g::text) || md5((g * 7)::text), 'bench_' || substr(md5(g::text), 1, 4),
        'bench', true, (extract(epoch from now()) * 1000)::bigint
      from apis a, generate_series(1, ${s.keys}) g
      where a.id = ${apiId}`;
    await sql`vacuum (analyze) keys`;
    await sql`checkpoint`;
    const [row] = await sql`
      select id from keys where api_id = ${apiId} and deleted_at is null
      order by id offset ${(s.page - 1) * s.pageSize} limit 1`;
    return String(row?.id);
  });
}

/** One request at a time, the two pages alternately (so that drift hits both alike). */
async function sequential(base: string, bodies: [unknown, unknown], rounds: number) {
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < rounds; i++) {
    for (const j of [0, 1] as const) {
      const t = performance.now();
      await call(base, "apis.listKeys", bodies[j]);
      times[j].push(performance.now() - t);
    }
  }
  const [firstPage, latePage] = [summarize(times[0]), summarize(times[1])];
  return { firstPage, latePage, p50Ratio: ratio(latePage.p50Ms, firstPage.p50Ms) };
}

async function listKeys(context: RunContext<KeysSettings>) {
  const s = context.settings;
  return withDatabase("keys", (db) =>
    withLatchkey({ databaseUrl: db.url }, async (lk) => {
      const { apiId } = await call(lk.base, "apis.createApi", { name: "bench" });
      const t0 = performance.now();
      const cursor = await seedKeys(db.url, apiId, s);
      const seedMs = Math.round(performance.now() - t0);
      console.log(`seeded ${s.keys} keys in ${seedMs} ms; page ${s.page} starts at ${cursor}`);
      const first = { apiId, limit: s.pageSize };
      const late = { apiId, limit: s.pageSize, cursor };
      for (const [body, want] of [
        [first, "key_0000000000000001"],
        [late, cursor],
      ] as const) {
        const page = await call(lk.base, "apis.listKeys", body);
        context.check(
          page.length === s.pageSize && page[0]?.keyId === want,
          `listKeys: ${page.length} keys from ${page[0]?.keyId}, want ${s.pageSize} from ${want}`,
        );
      }
      const load = (body: unknown, seconds: number) =>
        autocannonLoad({
          url: `${lk.base}/v2/apis.listKeys`,
          body: JSON.stringify(body),
          headers: authorization(),
          connections: 10,
          seconds,
        });
      // Whichever page is measured first came out slower (the server still warming up), so
      // both pages get an unmeasured load first.
      for (const body of [first, late]) await load(body, 2);
      const firstPage = await load(first, s.listSeconds);
      const latePage = await load(late, s.listSeconds);
      for (const r of [firstPage, latePage]) {
        context.check(r.non2xx === 0 && r.errors === 0, `listKeys: ${r.non2xx} non-2xx`);
      }
      const seq = await sequential(lk.base, [first, late], s.sequentialRounds);
      console.log(
        `listKeys page 1 p50 ${firstPage.p50Ms} ms, page ${s.page} p50 ${latePage.p50Ms} ms;` +
          ` one at a time ${seq.firstPage.p50Ms} / ${seq.latePage.p50Ms} ms`,
      );
      return {
        seedMs,
        cursor,
        firstPage,
        latePage,
        sequential: seq,
        p50Ratio: ratio(latePage.p50Ms, Math.max(firstPage.p50Ms, 1e-9)),
      };
    }),
  );
}

export default defineScenario<KeysSettings, KeysResult>({
  name: "keys",
  description: "keys.createKey throughput and apis.listKeys keyset pagination (PostgreSQL)",
  settings: ({ quick, args }) => {
    noArgs("keys", args);
    const keys = setting("BENCH_KEYS", 100_000, 10_000, quick);
    return {
      seconds: setting("BENCH_SECONDS", 10, 2, quick),
      listSeconds: setting("BENCH_LIST_SECONDS", 8, 2, quick),
      keys,
      pageSize: 100,
      page: Math.floor(keys / 100),
      sequentialRounds: quick ? 50 : 500,
    };
  },
  run: async (context) => ({
    createKey: await createKey(context),
    listKeys: await listKeys(context),
  }),
  render(r, s) {
    const c = r.createKey;
    const l = r.listKeys;
    const createLine =
      `\`keys.createKey\` with credits, meta and one rate limit, 20 connections: ` +
      `**${num(c.rps, 0)} req/s** (p50 ${ms(c.p50Ms)}, p99 ${ms(c.p99Ms)}, ` +
      `${num(c.keysCreated, 0)} keys created).`;
    const rows = [
      [
        `page 1`,
        l.firstPage.rps,
        ms(l.firstPage.p50Ms),
        ms(l.firstPage.p99Ms),
        ms(l.sequential.firstPage.p50Ms),
      ],
      [
        `page ${s.page}`,
        l.latePage.rps,
        ms(l.latePage.p50Ms),
        ms(l.latePage.p99Ms),
        ms(l.sequential.latePage.p50Ms),
      ],
    ];
    return [
      createLine,
      `\`apis.listKeys\` over ${num(s.keys, 0)} keys in one API, pages of ${s.pageSize}:`,
      table(["page", "req/s (10 connections):", "p50:", "p99:", "one at a time, p50:"], rows),
      `p50 of page ${s.page} over page 1: ${num(l.p50Ratio)} under load (target <= ${TARGET}:` +
        ` ${verdict((l.p50Ratio ?? 99) <= TARGET)}), ${num(l.sequential.p50Ratio)} one at a time.`,
    ].join("\n\n");
  },
});
