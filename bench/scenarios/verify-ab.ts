// Two builds at a fixed offered rate, A/B/A/B: the verification scenario's fixed-rate
// measurement (cached key, one auto-applied limit, events on, PGlite, server on core 0 and the
// generator on core 1) on two built checkouts, the /v2 door and then the gRPC port. At a fixed
// rate the server's CPU per request compares two builds without the generator's share.
//
//   npm run bench -- verify-ab <checkout A> <checkout B>   (each built with `npm run build`)
//
// Without checkouts both are this one: an A/A run, which shows the noise between two runs.
// BENCH_PAIRS=3, BENCH_RATE=2000, BENCH_SECONDS=15, BENCH_DOORS=json,grpc, BENCH_PROFILE_DIR
// (each server then runs with --cpu-prof and writes its profile under <dir>/<A|B>-<pair>/).
import { join, resolve } from "node:path";
import { projectRoot } from "../lib/dist.ts";
import { ms, num, table } from "../lib/markdown.ts";
import { defineScenario, setting } from "../lib/scenario.ts";
import { median, ratio } from "../lib/stats.ts";
import { latchkeyAtRate } from "./verify/fixed-rate.ts";

type Door = "json" | "grpc";

export interface AbSettings {
  checkouts: { A: string; B: string };
  pairs: number;
  rate: number;
  seconds: number;
  doors: Door[];
  profileDir: string | null;
}

interface Run {
  cpuUsPerRequest: number;
  p50Ms: number | null;
  p99Ms: number | null;
  achievedRate: number;
  preempted: number;
}

export interface AbResult {
  /** Per build, per door, one run per pair. */
  runs: Record<"A" | "B", Partial<Record<Door, Run[]>>>;
  medians: Record<string, { cpuUsPerRequest: number; p50Ms: number; p99Ms: number }>;
  /** A's CPU per request over B's, pair by pair. */
  cpuRatios: Partial<Record<Door, (number | null)[]>>;
}

export default defineScenario<AbSettings, AbResult>({
  name: "verify-ab",
  description: "two builds' CPU per verification at a fixed rate, in pairs (PGlite)",
  settings: ({ quick, args }) => {
    if (args.length !== 0 && args.length !== 2)
      throw new Error("verify-ab takes two checkouts, or none");
    // As given (relative to the project's root, where npm runs scripts); "." is this one.
    const [a = ".", b = "."] = args;
    return {
      checkouts: { A: a, B: b },
      pairs: setting("BENCH_PAIRS", 3, 1, quick),
      rate: setting("BENCH_RATE", 2000, 1000, quick),
      seconds: setting("BENCH_SECONDS", 15, 3, quick),
      doors: (process.env.BENCH_DOORS ?? "json,grpc").split(",") as Door[],
      profileDir: process.env.BENCH_PROFILE_DIR ?? null,
    };
  },
  async run({ settings: s, check, quiet }) {
    const runs: AbResult["runs"] = { A: {}, B: {} };
    for (let pair = 1; pair <= s.pairs; pair++) {
      for (const build of ["A", "B"] as const) {
        for (const door of s.doors) {
          const profile = s.profileDir
            ? ["--cpu-prof", `--cpu-prof-dir=${join(s.profileDir, `${build}-${pair}`)}`]
            : [];
          const r = await latchkeyAtRate(
            { check, quiet },
            {
              label: `pair ${pair} ${build} ${door}`,
              checkout: resolve(projectRoot, s.checkouts[build]),
              nodeArgs: profile,
              door,
              rate: s.rate,
              seconds: s.seconds,
              maxSockets: 64,
            },
          );
          const list = runs[build][door] ?? [];
          runs[build][door] = list;
          list.push({
            cpuUsPerRequest: r.server.cpuUsPerRequest,
            p50Ms: r.p50Ms,
            p99Ms: r.p99Ms,
            achievedRate: r.achievedRate,
            preempted: r.server.involuntarySwitches,
          });
        }
      }
    }
    const medians: AbResult["medians"] = {};
    const cpuRatios: AbResult["cpuRatios"] = {};
    for (const door of s.doors) {
      for (const build of ["A", "B"] as const) {
        const rs = runs[build][door] ?? [];
        medians[`${build} ${door}`] = {
          cpuUsPerRequest: median(rs.map((r) => r.cpuUsPerRequest)),
          p50Ms: median(rs.map((r) => r.p50Ms ?? Number.NaN)),
          p99Ms: median(rs.map((r) => r.p99Ms ?? Number.NaN)),
        };
      }
      cpuRatios[door] = (runs.A[door] ?? []).map((a, i) =>
        ratio(a.cpuUsPerRequest, runs.B[door]?.[i]?.cpuUsPerRequest),
      );
    }
    console.log(JSON.stringify({ medians, cpuRatios }, null, 1));
    return { runs, medians, cpuRatios };
  },
  render: (r, s) =>
    [
      `${
        resolve(s.checkouts.A) === resolve(s.checkouts.B)
          ? "A and B are both this checkout (A/A: the noise between two runs)"
          : `A is \`${s.checkouts.A}\`, B is \`${s.checkouts.B}\``
      }; pairs: ${s.pairs}, ${num(s.rate, 0)} req/s for ${s.seconds} s each.`,
      table(
        ["build and door", "CPU per request, median:", "p50:", "p99:", "A over B, pair by pair:"],
        Object.entries(r.medians).map(([k, m]) => [
          k,
          `${num(m.cpuUsPerRequest, 0)} us`,
          ms(m.p50Ms, 3),
          ms(m.p99Ms, 2),
          k.startsWith("A")
            ? (r.cpuRatios[k.slice(2) as Door] ?? []).map((x) => num(x)).join(", ")
            : "",
        ]),
      ),
    ].join("\n\n"),
});
