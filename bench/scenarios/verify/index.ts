// keys.verifyKey, the hot path, in parts (all by default, or name some):
//
//   npm run bench -- verify [door] [propagation] [fixed-rate] [credits] [scale] [memory]
//
//   door         the /v2 door and the gRPC port against bare servers, closed loop (door.ts)
//   propagation  a change through one process seen by another (propagation.ts)
//   fixed-rate   cost at a fixed rate, open loop, in rounds: the /v2 door (bare node:http, then
//                Latchkey on PGlite, on PostgreSQL, on PostgreSQL with credits) and the gRPC
//                port (bare grpc-js, PGlite, PostgreSQL); CPU per request from /proc, p50/p99/max,
//                event-loop delay (fixed-rate.ts)
//   credits      one hot key with credits on PostgreSQL: rate and exact balance (credits.ts)
//   scale        cache off, random keys among few and among many (many-keys.ts)
//   memory       the cache's heap over many distinct keys (many-keys.ts)
//
// Settings (BENCH_*): SECONDS=10, RATE=3000 (/v2), GRPC_RATE=1000, FIXED_RATE_SECONDS=60,
// WARMUP_SECONDS=30 (fixed rate), ROUNDS=3, PROPAGATION_ROUNDS=20, SCALE_RATE=1000,
// SCALE_SECONDS=20, SMALL_KEYS=10000, SCALE_KEYS=1000000, MEMORY_KEYS=1000000,
// CACHE_MAX_ENTRIES=100000, PROFILE=1 (the door part diagnoses even on target; the fixed-rate
// part adds a --cpu-prof run per door), QUIET_WAIT_SECONDS=60, DISTURBED_PERCENT=5,
// DATABASE_URL (the admin URL), CONFIGS (fixed rate: only these configurations, e.g.
// bareHttp,jsonPglite), SERVER_NODE_ARGS (fixed rate: flags for Latchkey's Node, e.g.
// --perf-basic-prof for `perf record`).
import { defineScenario } from "../../lib/scenario.ts";
import { round } from "../../lib/stats.ts";
import { type Part, type VerifyContext, type VerifySettings, verifySettings } from "./common.ts";
import { CREDITS_TARGET, type CreditsResult, creditsPart } from "./credits.ts";
import { type DoorResult, doorPart } from "./door.ts";
import { type FixedRatePartResult, fixedRatePart } from "./fixed-rate.ts";
import {
  CPU_RATIO_TARGET,
  CREDITS_COST_TARGET,
  P99_BARE_FACTOR,
  P99_TARGET_MS,
  p99Limit,
} from "./fixed-rate-summary.ts";
import {
  dropSeeded,
  MEMORY_GROWTH_TARGET,
  type MemoryResult,
  memoryPart,
  SCALE_TARGET,
  type ScaleResult,
  type Seeded,
  scalePart,
  seededDatabase,
} from "./many-keys.ts";
import { PROPAGATION_TARGET_MS, type PropagationResult, propagationPart } from "./propagation.ts";
import { renderVerify } from "./render.ts";

export interface Target {
  name: string;
  value: number | boolean | null;
  met: boolean;
}

export interface VerifyResult {
  door?: DoorResult;
  propagation?: PropagationResult;
  "fixed-rate"?: FixedRatePartResult;
  credits?: CreditsResult;
  scale?: ScaleResult;
  memory?: MemoryResult;
  /** Seconds each part took. */
  partSeconds: Partial<Record<Part, number>>;
  /** A part that failed, and why (the others still ran). */
  errors: Partial<Record<Part, string>>;
  targets: Target[];
}

function targetsOf(r: VerifyResult, s: VerifySettings): Target[] {
  const out: Target[] = [];
  const add = (name: string, value: number | boolean | null, met: boolean) =>
    out.push({ name, value, met });
  const p = r.propagation?.afterUpdate.p99Ms;
  if (p !== undefined)
    add(
      `propagation to a second process, p99 < ${PROPAGATION_TARGET_MS} ms`,
      p,
      (p ?? Infinity) < PROPAGATION_TARGET_MS,
    );
  const f = r["fixed-rate"];
  if (f?.shape === 2) fixedRateTargets(f, add);
  if (r.credits) {
    add(
      `credits / no credits >= ${CREDITS_TARGET}`,
      r.credits.ratio,
      (r.credits.ratio ?? 0) >= CREDITS_TARGET,
    );
    add("credits balance exact", r.credits.exactness.exact, r.credits.exactness.exact);
  }
  if (r.scale) {
    add(
      `cache off, p50 with ${s.scaleKeys} keys <= ${SCALE_TARGET}x ${s.smallKeys} keys`,
      r.scale.p50Ratio,
      (r.scale.p50Ratio ?? Infinity) <= SCALE_TARGET,
    );
  }
  if (r.memory) {
    add(
      `heap bounded: x${r.memory.keysGrowth} keys, heap growth < x${MEMORY_GROWTH_TARGET}`,
      r.memory.heapGrowth,
      (r.memory.heapGrowth ?? Infinity) < MEMORY_GROWTH_TARGET,
    );
  }
  return out;
}

/** The fixed-rate part's targets, on the medians over its rounds. */
function fixedRateTargets(
  f: FixedRatePartResult,
  add: (name: string, value: number | boolean | null, met: boolean) => void,
): void {
  const engines = { Pglite: "PGlite", Postgresql: "PostgreSQL" } as const;
  const bareP99 = f.summary.bareHttp.p99Ms?.median;
  for (const [key, engine] of Object.entries(engines) as [keyof typeof engines, string][]) {
    const cpu = f.cpuRatios[`json${key}`].median;
    add(
      `${engine}, /v2 at ${f.rates.json}/s: bare node:http CPU / Latchkey's (server process) >= ${CPU_RATIO_TARGET}`,
      cpu,
      (cpu ?? 0) >= CPU_RATIO_TARGET,
    );
    const p99 = f.summary[`json${key}`].p99Ms?.median ?? null;
    const limit = p99Limit(bareP99);
    add(
      limit.relative
        ? `${engine}, /v2 at ${f.rates.json}/s: p99 <= ${P99_BARE_FACTOR}x bare node:http's ${bareP99} ms (bare's own p99 >= ${P99_TARGET_MS} ms)`
        : `${engine}, /v2 at ${f.rates.json}/s: p99 < ${P99_TARGET_MS} ms`,
      p99,
      p99 !== null && (p99 < P99_TARGET_MS || (limit.relative && p99 <= limit.limitMs)),
    );
  }
  for (const [key, engine] of Object.entries(engines) as [keyof typeof engines, string][]) {
    const cpu = f.cpuRatios[`grpc${key}`].median;
    add(
      `${engine}, gRPC at ${f.rates.grpc}/s: bare grpc-js CPU / Latchkey's >= ${CPU_RATIO_TARGET}`,
      cpu,
      (cpu ?? 0) >= CPU_RATIO_TARGET,
    );
  }
  const credits = f.creditsCost.median;
  add(
    `PostgreSQL, /v2 at ${f.rates.json}/s: CPU (server + backends) with credits / without <= ${CREDITS_COST_TARGET}`,
    credits,
    (credits ?? Infinity) <= CREDITS_COST_TARGET,
  );
  add("fixed rate, credits balance exact in every round", f.creditsExact, f.creditsExact);
}

async function runParts(context: VerifyContext): Promise<VerifyResult> {
  const result: VerifyResult = { partSeconds: {}, errors: {}, targets: [] };
  let seeded: Seeded | undefined;
  const manyKeys = async () => {
    seeded ??= await seededDatabase();
    return seeded;
  };
  const parts: Record<Part, () => Promise<void>> = {
    door: async () => {
      result.door = await doorPart(context);
    },
    propagation: async () => {
      result.propagation = await propagationPart(context);
    },
    "fixed-rate": async () => {
      result["fixed-rate"] = await fixedRatePart(context);
    },
    credits: async () => {
      result.credits = await creditsPart(context);
    },
    scale: async () => {
      result.scale = await scalePart(context, await manyKeys());
    },
    memory: async () => {
      result.memory = await memoryPart(context, await manyKeys());
    },
  };
  try {
    for (const part of context.settings.parts) {
      console.log(`\n== ${part}`);
      const t0 = performance.now();
      try {
        await parts[part]();
      } catch (err) {
        console.error(err);
        result.errors[part] = String((err as Error)?.stack ?? err);
        context.check(false, `${part}: ${(err as Error)?.message ?? err}`);
      }
      result.partSeconds[part] = round((performance.now() - t0) / 1000, 1);
    }
  } finally {
    if (seeded) await dropSeeded(seeded);
  }
  result.targets = targetsOf(result, context.settings);
  console.log("\n== targets");
  for (const t of result.targets)
    console.log(`${t.met ? "met   " : "MISSED"}  ${t.name}: ${t.value}`);
  return result;
}

export default defineScenario<VerifySettings, VerifyResult>({
  name: "verify",
  description: "keys.verifyKey: doors vs bare, propagation, fixed rate, credits, scale, memory",
  settings: ({ quick, args }) => verifySettings(quick, args),
  run: runParts,
  render: renderVerify,
});
