// noisy-neighbour: how one tenant's heaviest requests touch another tenant. A quiet tenant
// calls createKey and verifyKey one after the other (p50/p99 of each) alone, then while a noisy
// tenant loops over the heaviest requests the API allows from several connections: migrateKeys
// of 100 keys with 1,000 permissions and 100 roles each, createKey with every list at its
// maximum, and analytics queries that run to the timeout or build far more than the result
// cap. Before that, the server's peak resident memory (VmHWM) across hostile analytics
// queries. PostgreSQL only; runs the built server (npm run build). Results go to bench/results/.
//
//   BENCH_SECONDS=20            measured seconds of each phase
//   BENCH_NOISY_CONNECTIONS=6   concurrent loops of the noisy tenant
//   BENCH_DATABASE_URL          admin URL (default postgres://postgres@127.0.0.1:5432/test)
//   BENCH_NOISY_KINDS           what the noisy tenant sends, in turn (default
//                               migrateKeys,analytics,createKey,analytics)
//   LATCHKEY_ENV                extra server settings, as JSON ({"STATEMENT_TIMEOUT_MS":"0"})
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { start, withDatabase } from "./lib.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const NOISY = Number(process.env.BENCH_NOISY_CONNECTIONS ?? 6);
const KINDS = (process.env.BENCH_NOISY_KINDS ?? "migrateKeys,analytics,createKey,analytics").split(
  ",",
);
const EXTRA_ENV = JSON.parse(process.env.LATCHKEY_ENV ?? "{}");
const results = new URL("./results/", import.meta.url).pathname;
const rootKey = "bench_root_key_0123456789abcdef";
const MAX_BODY = 1024 * 1024;

/** POST /v2/<procedure>; resolves to status and parsed body (never throws on a status). */
async function call(base, key, procedure, body, signal) {
  const res = await fetch(`${base}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

async function must(base, key, procedure, body) {
  const r = await call(base, key, procedure, body);
  if (r.status !== 200) throw new Error(`${procedure}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/** A second workspace with an all-powerful root key, made with the CLI as an operator would. */
function noisyTenant(url) {
  const cli = (...args) =>
    execFileSync(process.execPath, ["dist/src/cli/main.js", ...args], {
      env: { ...process.env, DATABASE_URL: url },
      encoding: "utf8",
    }).trim();
  const workspace = cli("workspace", "create", "--name", "noisy");
  return cli("root-key", "create", "--workspace", workspace, "--all");
}

const q = (ms) => (sorted) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(ms * sorted.length))] : null;
const p50 = q(0.5);
const p99 = q(0.99);
const round = (x) => (x === null ? null : Math.round(x * 100) / 100);

function summary(latencies) {
  const s = [...latencies].sort((a, b) => a - b);
  return {
    n: s.length,
    p50Ms: round(p50(s)),
    p99Ms: round(p99(s)),
    maxMs: round(s.at(-1) ?? null),
  };
}

/** The quiet tenant: createKey then verifyKey, one at a time, until `until`. */
async function quiet(base, apiId, key, until) {
  const created = [];
  const verified = [];
  let failures = 0;
  while (Date.now() < until) {
    let t = performance.now();
    const c = await call(base, rootKey, "keys.createKey", { apiId, name: "quiet" });
    created.push(performance.now() - t);
    t = performance.now();
    const v = await call(base, rootKey, "keys.verifyKey", { key });
    verified.push(performance.now() - t);
    if (c.status !== 200 || v.status !== 200 || !v.body.data.valid) failures++;
  }
  return { createKey: summary(created), verifyKey: summary(verified), failures };
}

const VALUES = (n) => `(values ${Array.from({ length: n }, (_, i) => `(${i})`).join(",")})`;
/** Analytics queries built to be as costly as the guard lets them. */
const HOSTILE = [
  // 20 MB of rows, against a 10 MiB result cap.
  `select lpad('', 100000, 'x') as x from ${VALUES(200)} as v(n)`,
  // One row of 11 MB.
  "select lpad('', 11000000, 'x') as x",
  // A string_agg of 90 MB in one group.
  `select string_agg(lpad('', 1000, 'y'), ',') as s from ${VALUES(300)} as a(n), ${VALUES(300)} as b(n)`,
  // An array_agg of 8 million elements.
  `select array_agg(a.n * b.n * c.n) as a from ${VALUES(200)} as a(n), ${VALUES(200)} as b(n), ${VALUES(200)} as c(n)`,
  // A cross join of 1.6 billion rows: runs until the analytics timeout.
  `select count(*) as n from ${VALUES(200)} as a(n), ${VALUES(200)} as b(n), ${VALUES(200)} as c(n), ${VALUES(200)} as d(n)`,
];

/** The heaviest bodies the API accepts (within the 1 MiB body limit). */
function heavyBodies(apiId, roles) {
  const permissions = Array.from({ length: 1000 }, (_, i) => `p${String(i).padStart(3, "0")}`);
  const ratelimits = Array.from({ length: 50 }, (_, i) => ({
    name: `limit_${i}`,
    limit: 100,
    duration: 60_000,
  }));
  const meta = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
  // Each migration's hashes are new (a taken hash is only reported): built before the load.
  const migrations = Array.from({ length: 60 }, () => {
    const keys = Array.from({ length: 100 }, () => ({
      hash: randomBytes(32).toString("hex"),
      permissions,
      roles,
      ratelimits: ratelimits.slice(0, 2),
    }));
    const body = JSON.stringify({ migrationId: "noisy", apiId, keys });
    if (body.length > MAX_BODY) throw new Error(`migrateKeys body of ${body.length} bytes`);
    return body;
  });
  let next = 0;
  const migrate = () => migrations[next++ % migrations.length];
  const createKey = JSON.stringify({ apiId, permissions, roles, ratelimits, meta });
  return { migrate, createKey };
}

/**
 * The noisy tenant, in a worker thread of its own so that building and reading its large
 * bodies does not delay the quiet tenant's timings: NOISY loops until `until`.
 */
async function noisyWorker({ base, key, apiId, roles, seconds }) {
  const bodies = heavyBodies(apiId, roles);
  parentPort.postMessage("ready");
  const until = Date.now() + seconds * 1000;
  const counts = {};
  await Promise.all(
    Array.from({ length: NOISY }, (_, i) => noisy(base, key, bodies, until, counts, i)),
  );
  parentPort.postMessage(counts);
}

/** Starts the noisy worker: `ready` once its bodies are built, `done` with its counts. */
function runNoisy(data) {
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  const failed = new Promise((_, reject) => worker.once("error", reject));
  const message = () => Promise.race([failed, new Promise((r) => worker.once("message", r))]);
  const ready = message();
  return { ready, done: ready.then(message) };
}

/**
 * One loop of the noisy tenant; counts the answers by kind and status. A request still
 * unanswered when the phase ends is abandoned (counted as such) so that the phase ends on time.
 */
async function noisy(base, key, bodies, until, counts, offset) {
  const kinds = KINDS;
  const signal = AbortSignal.timeout(until - Date.now());
  for (let i = offset; Date.now() < until; i++) {
    const kind = kinds[i % kinds.length];
    let status;
    try {
      let r;
      if (kind === "migrateKeys")
        r = await call(base, key, "keys.migrateKeys", bodies.migrate(), signal);
      else if (kind === "createKey")
        r = await call(base, key, "keys.createKey", bodies.createKey, signal);
      else {
        const query = HOSTILE[Math.floor(i / kinds.length) % HOSTILE.length];
        r = await call(base, key, "analytics.getVerifications", { query }, signal);
      }
      status = r.status;
    } catch {
      status = "unanswered at the end";
    }
    const k = `${kind} ${status}`;
    counts[k] = (counts[k] ?? 0) + 1;
  }
}

function memoryKb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rssKb: field("VmRSS"), peakKb: field("VmHWM") };
}

/** Peak RSS of the server across each hostile analytics query, run twice at once. */
async function memory(base, key, pid) {
  const before = memoryKb(pid);
  const out = [];
  for (const query of HOSTILE) {
    const answers = await Promise.all(
      [0, 1].map(() => call(base, key, "analytics.getVerifications", { query })),
    );
    out.push({
      query: query.slice(0, 60),
      statuses: answers.map((a) => a.status),
      codes: answers.map((a) => a.body.error?.type?.split("/").at(-1) ?? "ok"),
      peakGrowthMb: Math.round((memoryKb(pid).peakKb - before.peakKb) / 102.4) / 10,
    });
  }
  return { before, after: memoryKb(pid), queries: out };
}

async function run(url) {
  const env = {
    DATABASE_URL: url,
    PORT: "0",
    GRPC_PORT: "off",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    ROOT_KEY: rootKey,
    ...EXTRA_ENV,
  };
  // Started here rather than through withLatchkey: the memory figures read its /proc entry.
  const lk = await start(
    process.execPath,
    ["dist/src/cli/main.js", "serve"],
    { ...env, LOG_LEVEL: "info" },
    /"port":(\d+)[^\n]*latchkey listening/,
  );
  const base = `http://127.0.0.1:${lk.match[1]}`;
  try {
    const noisyKey = noisyTenant(url);
    const quietApi = (await must(base, rootKey, "apis.createApi", { name: "quiet" })).apiId;
    const quietKey = (await must(base, rootKey, "keys.createKey", { apiId: quietApi })).key;
    const noisyApi = (await must(base, noisyKey, "apis.createApi", { name: "noisy" })).apiId;
    const roles = Array.from({ length: 100 }, (_, i) => `role_${i}`);
    for (const name of roles) await must(base, noisyKey, "permissions.createRole", { name });
    await quiet(base, quietApi, quietKey, Date.now() + 2_000);

    const mem = await memory(base, noisyKey, lk.child.pid);
    const alone = await quiet(base, quietApi, quietKey, Date.now() + SECONDS * 1000);
    const loops = runNoisy({ base, key: noisyKey, apiId: noisyApi, roles, seconds: SECONDS });
    await loops.ready;
    const underLoad = await quiet(base, quietApi, quietKey, Date.now() + SECONDS * 1000);
    const counts = await loops.done;
    return { memory: mem, alone, underLoad, noisyAnswers: counts };
  } finally {
    await lk.stop();
  }
}

if (!isMainThread) {
  await noisyWorker(workerData);
  process.exit(0);
}

const report = {
  bench: "noisy-neighbour",
  at: new Date().toISOString(),
  commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(),
  seconds: SECONDS,
  noisyConnections: NOISY,
  noisyKinds: KINDS,
  serverEnv: EXTRA_ENV,
  ...(await withDatabase("noisy", run)),
};
console.log(JSON.stringify(report, null, 2));
mkdirSync(results, { recursive: true });
const stamp = report.at.replaceAll(":", "-").slice(0, 19);
writeFileSync(
  join(results, `noisy-neighbour-${stamp}.json`),
  `${JSON.stringify(report, null, 2)}\n`,
);
writeFileSync(join(results, "noisy-neighbour-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
