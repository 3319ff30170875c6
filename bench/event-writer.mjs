// The event writer alone: how long recording and flushing 5,000 verification events take,
// and the longest the event loop waits between two turns during a flush (what a request
// arriving then would wait). PGlite runs on the server's thread, so there this is the cost the
// open-loop benchmark sees as latency, without the noise of HTTP. On PostgreSQL the flush time
// says whether the writer keeps up with the verifications (5,000 a second in the open loop).
//
//   npm run bench -- event-writer          (uses dist/: run `npm run build` first)
//
// For each slice size (rows per statement): 12 rounds of record 5,000 + flush on a PGlite data
// directory, the first 2 discarded; then the same with 100-row slices on a fresh PostgreSQL
// database (BENCH_DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432/test;
// BENCH_POSTGRES=off skips it). Results go to bench/results/event-writer-*.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { EventBuffer } from "../dist/src/analytics/event-buffer.js";
import { migrate } from "../dist/src/storage/migrate.js";
import { openPglite } from "../dist/src/storage/pglite.js";
import { openPostgres } from "../dist/src/storage/postgres.js";
import { withDatabase } from "./lib.mjs";

const EVENTS = 5_000;
const ROUNDS = 12;
const WARMUP = 2;
const SLICES = (process.env.SLICES ?? "50,100,200").split(",").map(Number);

const round = (x) => Math.round(x * 100) / 100;
const median = (xs) => xs.toSorted((a, b) => a - b)[xs.length >> 1];

/** One event like the benchmark's verifications: one key, no identity, no tags. */
const event = (i) => ({
  kind: "verification",
  time: Date.now(),
  workspaceId: "ws_4ZeTggi7oYuRWk9t",
  apiId: "api_4ZeTggi7oYuRWk9t",
  keyId: "key_4ZeTggi7oYuRWk9t",
  identityId: null,
  externalId: null,
  outcome: "VALID",
  tags: [],
  spentCredits: 0,
  requestId: `req_${i.toString(36).padStart(16, "0")}`,
});

/** Flushes while a ticker on the check phase records every gap between two loop turns. */
async function flushWatched(buffer) {
  const gaps = [];
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t0 = performance.now();
  if (!(await buffer.flush())) throw new Error("flush failed");
  const ms = performance.now() - t0;
  running = false;
  gaps.sort((a, b) => a - b);
  return { ms, gapP90: gaps[Math.floor(gaps.length * 0.9)], gapMax: gaps.at(-1) };
}

/** PGlite in a fresh data directory, or PostgreSQL at `url`. */
async function measure(sliceSize, url) {
  const dir = mkdtempSync(join(tmpdir(), "latchkey-bench-events-"));
  const db = url ? openPostgres({ url }) : await openPglite({ dataDir: dir });
  try {
    await migrate(db, Date.now());
    const options = { maxEvents: 100_000, flushIntervalMs: 60_000, batchSize: 10_000, sliceSize };
    const buffer = new EventBuffer(db, options, pino({ level: "silent" }));
    let n = 0;
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      for (let i = 0; i < EVENTS; i++) buffer.record(event(n++));
      const recordMs = performance.now() - t0;
      const flush = await flushWatched(buffer);
      if (r >= WARMUP) rounds.push({ recordMs, ...flush });
    }
    const [written] = await db.query("select count(*)::int as n from key_verifications");
    if (written.n !== n) throw new Error(`${written.n} rows written of ${n}`);
    return {
      engine: url ? "postgres" : "pglite",
      sliceSize,
      recordMs: round(median(rounds.map((x) => x.recordMs))),
      flushMs: round(median(rounds.map((x) => x.ms))),
      gapP90Ms: round(median(rounds.map((x) => x.gapP90))),
      gapMaxMs: round(median(rounds.map((x) => x.gapMax))),
      gapMaxWorstMs: round(Math.max(...rounds.map((x) => x.gapMax))),
    };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const report = {
  date: new Date().toISOString(),
  events: EVENTS,
  rounds: ROUNDS - WARMUP,
  runs: [],
};
function show(r) {
  report.runs.push(r);
  console.log(
    `${r.engine}: ${EVENTS} events, ${r.sliceSize} rows per statement: record ${r.recordMs} ms,` +
      ` flush ${r.flushMs} ms; waits between two loop turns during the flush: p90 ${r.gapP90Ms}` +
      ` ms, longest ${r.gapMaxMs} ms (worst round ${r.gapMaxWorstMs} ms)`,
  );
}
for (const size of SLICES) show(await measure(size));
if (process.env.BENCH_POSTGRES !== "off") {
  show(await withDatabase("events", (url) => measure(100, url)));
}
const results = new URL("./results/", import.meta.url).pathname;
mkdirSync(results, { recursive: true });
const name = `event-writer-${report.date.slice(0, 19).replace(/[:T]/g, "-")}.json`;
writeFileSync(join(results, name), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(results, "event-writer-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote bench/results/${name}`);
process.exit(0);
