// What the embedded default (`latchkey serve` on PGlite, no DATABASE_URL) keeps resident when
// idle: started in a fresh data directory, restarted on it, after a small load (a few writes
// and 1,000 verifications) and after one analytics query, each reading taken once the
// server has been left alone for `idleSeconds`. Several runs, each in a new directory; the
// section shows medians, with the parts of the resident memory by kind of mapping.
//
//   npm run bench -- footprint [checkout]   another built checkout instead of this one
//
//   BENCH_RUNS, BENCH_IDLE_SECONDS, BENCH_VERIFICATIONS, BENCH_WRITES
//   BENCH_SERVER_NODE_ARGS   flags of the server's Node, space-separated (to compare V8 flags)
//   LATCHKEY_ENV             more settings of the server, as JSON
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { call, metricsOf, seedKey, verify } from "../lib/api.ts";
import { projectRoot } from "../lib/dist.ts";
import { num, table, verdict } from "../lib/markdown.ts";
import { memoryOf } from "../lib/proc.ts";
import { defineScenario, setting } from "../lib/scenario.ts";
import { type Latchkey, serverNodeArgs, withLatchkey } from "../lib/server.ts";
import { type MemoryParts, memoryParts } from "../lib/smaps.ts";
import { median, round, sleep } from "../lib/stats.ts";

export interface FootprintSettings {
  runs: number;
  idleSeconds: number;
  verifications: number;
  /** Keys created before the verifications (each one write, plus the API's). */
  writes: number;
  /** Flags of the server's Node, when any. */
  serverNodeArgs?: string[];
  serverEnv: Record<string, string>;
  /** The built checkout measured instead of this one, relative to this one. */
  checkout?: string;
}

const PHASES = ["first start", "restart", "after the load", "after an analytics query"] as const;
type Phase = (typeof PHASES)[number];

export interface Reading extends MemoryParts {
  phase: Phase;
  rssMb: number;
  /** VmHWM: the most the process held at once since it started. */
  peakMb: number;
  /** The main thread's V8 heap (prom-client's gauges), MB. */
  mainHeapTotalMb: number;
  mainHeapUsedMb: number;
}

export interface FootprintResult {
  /** One list of readings per run, in phase order. */
  runs: Reading[][];
}

/** Idle RSS after the small load the section holds the embedded default to, MB. */
export const TARGET_IDLE_MB = 350;

const MB = 2 ** 20;

async function read(lk: Latchkey, phase: Phase, idleSeconds: number): Promise<Reading> {
  await sleep(idleSeconds * 1000);
  const { values } = await metricsOf(lk.admin);
  const { rssMb, peakMb } = memoryOf(lk.pid);
  return {
    phase,
    rssMb,
    peakMb,
    ...memoryParts(lk.pid),
    mainHeapTotalMb: round((values.nodejs_heap_size_total_bytes ?? 0) / MB, 1),
    mainHeapUsedMb: round((values.nodejs_heap_size_used_bytes ?? 0) / MB, 1),
  };
}

/** A few writes, then `verifications` verifications of those keys, one after another. */
async function smallLoad(lk: Latchkey, s: FootprintSettings): Promise<void> {
  const first = await seedKey(lk.base);
  const keys = [first.key];
  for (let i = 1; i < s.writes; i++) keys.push((await seedKey(lk.base, {}, first.apiId)).key);
  for (let i = 0; i < s.verifications; i++) {
    const v = await verify(lk.base, keys[i % keys.length] ?? "");
    if (v.valid !== true) throw new Error(`verifyKey: ${JSON.stringify(v)}`);
  }
}

async function oneRun(s: FootprintSettings): Promise<Reading[]> {
  const dataDir = mkdtempSync(join(tmpdir(), "latchkey-bench-footprint-"));
  const options = {
    env: { ...s.serverEnv, DATA_DIR: dataDir },
    nodeArgs: s.serverNodeArgs ?? [],
    checkout: resolve(projectRoot, s.checkout ?? "."),
  };
  try {
    const first = await withLatchkey(options, (lk) => read(lk, "first start", s.idleSeconds));
    return [
      first,
      ...(await withLatchkey(options, async (lk) => {
        const restart = await read(lk, "restart", s.idleSeconds);
        await smallLoad(lk, s);
        const loaded = await read(lk, "after the load", s.idleSeconds);
        await call(lk.base, "analytics.getVerifications", {
          query: "select outcome, count(*) as n from key_verifications_v1 group by outcome",
        });
        return [restart, loaded, await read(lk, "after an analytics query", s.idleSeconds)];
      })),
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export default defineScenario<FootprintSettings, FootprintResult>({
  name: "footprint",
  description: "idle resident memory of the embedded default (PGlite): at start, after a load",
  settings: ({ quick, args }) => {
    if (args.length > 1) throw new Error("footprint takes one checkout at most");
    const nodeArgs = serverNodeArgs();
    return {
      runs: setting("BENCH_RUNS", 3, 1, quick),
      idleSeconds: setting("BENCH_IDLE_SECONDS", 15, 5, quick),
      verifications: setting("BENCH_VERIFICATIONS", 1000, 1000, quick),
      writes: setting("BENCH_WRITES", 10, 10, quick),
      ...(nodeArgs.length > 0 ? { serverNodeArgs: nodeArgs } : {}),
      serverEnv: JSON.parse(process.env.LATCHKEY_ENV ?? "{}"),
      ...(args[0] ? { checkout: args[0] } : {}),
    };
  },
  run: async ({ settings: s, check }) => {
    const runs: Reading[][] = [];
    for (let i = 0; i < s.runs; i++) {
      const readings = await oneRun(s);
      for (const r of readings) console.log(JSON.stringify(r));
      runs.push(readings);
    }
    const loaded = median(runs.map((r) => r[2]?.rssMb ?? Number.NaN));
    check(
      loaded <= TARGET_IDLE_MB,
      `idle RSS after the load ${loaded} MB, over the ${TARGET_IDLE_MB} MB target`,
    );
    return { runs };
  },
  render: (r) => {
    const at = (phase: Phase) => r.runs.map((run) => run.find((x) => x.phase === phase));
    const mid = (phase: Phase, pick: (x: Reading) => number) => {
      const xs = at(phase).flatMap((x) => (x ? [pick(x)] : []));
      return xs.length > 0 ? median(xs) : Number.NaN;
    };
    const rows = PHASES.map((phase) => {
      const col = (pick: (x: Reading) => number) => num(mid(phase, pick), 0);
      const rss = at(phase).flatMap((x) => (x ? [x.rssMb] : []));
      const spread =
        rss.length > 1 ? ` (${num(Math.min(...rss), 0)}-${num(Math.max(...rss), 0)})` : "";
      return [
        phase,
        `${col((x) => x.rssMb)}${spread}`,
        col((x) => x.peakMb),
        col((x) => x.wasmMemoriesMb[0] ?? 0),
        col((x) => x.wasmMemoriesMb.slice(1).reduce((a, b) => a + b, 0)),
        col((x) => x.compiledCodeMb),
        col((x) => x.otherAnonymousMb),
        col((x) => x.filesMb),
        col((x) => x.mainHeapTotalMb),
      ];
    });
    const loaded = mid("after the load", (x) => x.rssMb);
    return [
      table(
        [
          "idle, MB (median of runs)",
          "RSS:",
          "peak RSS:",
          "PGlite's wasm memory:",
          "other wasm memory:",
          "compiled code:",
          "other anonymous:",
          "files:",
          "main V8 heap (total):",
        ],
        rows,
      ),
      `Idle RSS after the load: ${num(loaded, 0)} MB against a target of ${TARGET_IDLE_MB} MB: ${verdict(loaded <= TARGET_IDLE_MB)}. Runs: ${r.runs.length}.`,
    ].join("\n\n");
  },
});
