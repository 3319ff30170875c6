// pglite-hostile: what one hostile analytics query on the embedded database (PGlite) does to
// a cached verifyKey. A key is verified once (cached), then verified one call after another:
// first alone, then while a tenant's analytics query cross-joins VALUES lists (no table, no
// function: the guard lets it through) until the analytics timeout. Reports the latency of the
// cached verifications in each phase (p50, p99, max, count) and when the hostile query was
// answered, with what, and how long the next write waited. Runs the built server (npm run build). Results go to bench/results/.
//
//   BENCH_SECONDS=3             seconds of the quiet phase
//   BENCH_HOSTILE_VALUES=7      VALUES lists of ten rows cross-joined (10^n rows)
//   LATCHKEY_ENV                extra server settings, as JSON ({"ANALYTICS_TIMEOUT_MS":"2000"})
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start } from "./lib.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const LISTS = Number(process.env.BENCH_HOSTILE_VALUES ?? 7);
const EXTRA_ENV = JSON.parse(process.env.LATCHKEY_ENV ?? "{}");
const rootKey = "bench_root_key_0123456789abcdef";
const results = new URL("./results/", import.meta.url).pathname;

async function call(base, procedure, body, key = rootKey) {
  const res = await fetch(`${base}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const ten = "(values (1),(2),(3),(4),(5),(6),(7),(8),(9),(10))";
const HOSTILE = `select count(*) from ${Array.from({ length: LISTS }, (_, i) => `${ten} as v${i}(n)`).join(", ")}`;

/** Verifies `key` one call after another until `until()` is true; latencies in ms. */
async function verifyLoop(base, key, until) {
  const times = [];
  while (!until()) {
    const t = performance.now();
    const r = await call(base, "keys.verifyKey", { key });
    if (r.body.data?.valid !== true) throw new Error(`verifyKey: ${JSON.stringify(r.body)}`);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? null;
  const r = (x) => (x === null ? null : Math.round(x * 100) / 100);
  return { count: times.length, p50: r(at(0.5)), p99: r(at(0.99)), max: r(times.at(-1) ?? null) };
}

const dataDir = mkdtempSync(join(tmpdir(), "latchkey-bench-hostile-"));
const lk = await start(
  process.execPath,
  ["dist/src/cli/main.js", "serve"],
  {
    DATA_DIR: dataDir,
    PORT: "0",
    GRPC_PORT: "off",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    ROOT_KEY: rootKey,
    ...EXTRA_ENV,
  },
  /"port":(\d+)[^\n]*latchkey listening/,
);
const base = `http://127.0.0.1:${lk.match[1]}`;
try {
  const apiId = (await call(base, "apis.createApi", { name: "bench" })).body.data.apiId;
  const { key } = (await call(base, "keys.createKey", { apiId })).body.data;
  await call(base, "keys.verifyKey", { key });
  const quietEnd = performance.now() + SECONDS * 1000;
  const quiet = await verifyLoop(base, key, () => performance.now() > quietEnd);

  let answered;
  const started = performance.now();
  const hostile = call(base, "analytics.getVerifications", { query: HOSTILE }).then((r) => {
    answered = { afterMs: Math.round(performance.now() - started), status: r.status };
    answered.code = r.body.error?.code ?? null;
  });
  const during = await verifyLoop(base, key, () => answered !== undefined);
  await hostile;
  // The first write after the hostile query waits for the database to be reopened (if it was).
  const t = performance.now();
  const after = await call(base, "keys.createKey", { apiId });
  const createKeyAfterMs = Math.round(performance.now() - t);
  const out = {
    date: new Date().toISOString(),
    runtime: process.version,
    hostileRows: `10^${LISTS}`,
    env: EXTRA_ENV,
    quiet,
    duringHostile: during,
    hostile: answered,
    createKeyAfter: { status: after.status, ms: createKeyAfterMs },
  };
  console.log(JSON.stringify(out, null, 2));
  mkdirSync(results, { recursive: true });
  const stamp = out.date.replaceAll(":", "-").slice(0, 19);
  writeFileSync(join(results, `pglite-hostile-${stamp}.json`), `${JSON.stringify(out, null, 2)}\n`);
} finally {
  await lk.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
