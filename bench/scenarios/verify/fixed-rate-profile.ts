// BENCH_PROFILE=1 in the fixed-rate part: one more Latchkey run per door (PGlite) under
// `--cpu-prof`, which writes one profile per thread at exit into a folder under
// bench/results/profiles/; the main thread's and the busiest worker's (PGlite's) are cut to
// the measured window (the generator gives its edges on the profiles' clock) and summarised.
import { mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { projectRoot } from "../../lib/dist.ts";
import { printProfile, summarizeProfileDir, type ThreadProfile } from "../../lib/profile.ts";
import { resultsDir } from "../../lib/results.ts";
import type { VerifyContext } from "./common.ts";
import { latchkeyAtRate } from "./fixed-rate.ts";

export interface ProfileRun {
  door: "json" | "grpc";
  /** Where the profiles are, from the project's root (git-ignored). */
  dir: string;
  rate: number;
  /** The profiled run's own figures (the profiler costs some). */
  cpuUsPerRequest: number;
  p99Ms: number | null;
  windowMs: number;
  main: ThreadProfile | null;
  busiestWorker: ThreadProfile | null;
  workers: number;
}

export async function profileRuns(context: VerifyContext): Promise<ProfileRun[]> {
  const s = context.settings;
  const stamp = new Date().toISOString().slice(0, 19).replaceAll(":", "-");
  const out: ProfileRun[] = [];
  for (const door of ["json", "grpc"] as const) {
    const dir = join(resultsDir, "profiles", `verify-fixed-rate-${stamp}`, door);
    mkdirSync(dir, { recursive: true });
    const rate = door === "grpc" ? s.grpcRate : s.rate;
    const r = await latchkeyAtRate(context, {
      label: `profile, ${door === "grpc" ? "gRPC" : "/v2"}, PGlite`,
      door,
      rate,
      seconds: s.fixedRateSeconds,
      warmupSeconds: s.fixedRateWarmupSeconds,
      nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
    });
    // The server has stopped: its threads wrote their profiles as it exited.
    const profiles = summarizeProfileDir(dir, r.window);
    context.check(profiles.main !== null, `profile ${door}: no main-thread profile in ${dir}`);
    if (profiles.main) printProfile(`${door}: main thread`, profiles.main.summary);
    if (profiles.busiestWorker)
      printProfile(`${door}: busiest worker`, profiles.busiestWorker.summary);
    out.push({
      door,
      dir: relative(projectRoot, dir),
      rate,
      cpuUsPerRequest: r.server.cpuUsPerRequest,
      p99Ms: r.p99Ms,
      windowMs: Math.round((r.window.endUs - r.window.startUs) / 1000),
      ...profiles,
    });
  }
  return out;
}
