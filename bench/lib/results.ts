// Result files: bench/results/<scenario>-<timestamp>.json (git-ignored), one per run of a
// scenario, with what was measured on what machine; docs/benchmarks.md is rendered from the
// latest one of each scenario.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { distBuiltAt, projectRoot } from "./dist.ts";

export const resultsDir = join(projectRoot, "bench/results");

export interface Machine {
  cpus: number;
  model: string | undefined;
  node: string;
  /** 1-minute load average when the run started and when it ended. */
  loadAverage: { start: number; end: number };
}

export interface Build {
  commit: string | null;
  /** Whether src/ differed from that commit. */
  srcChanged: boolean;
  distBuiltAt: string | null;
  /** Set when dist/ was rebuilt during the run (later parts then ran the newer build). */
  distRebuiltAt?: string;
}

export interface ResultFile<S = unknown, R = unknown> {
  scenario: string;
  /** When the run started (ISO, UTC). */
  date: string;
  quick: boolean;
  durationSeconds: number;
  machine: Machine;
  build: Build;
  settings: S;
  /** Failed checks; empty when every check passed. */
  problems: string[];
  /** Set when the run failed; `result` is then null. */
  error?: string;
  result: R | null;
}

function git(...args: string[]): string | null {
  try {
    return execFileSync("git", args, { cwd: projectRoot, encoding: "utf8" }).trim();
  } catch {
    return null;
  }
}

export function buildInfo(): Build {
  return {
    commit: git("rev-parse", "--short", "HEAD"),
    srcChanged: (git("status", "--porcelain", "--", "src") ?? "") !== "",
    distBuiltAt: distBuiltAt(),
  };
}

export function machineAtStart(): Machine {
  const load = round2(loadavg()[0] ?? 0);
  return {
    cpus: cpus().length,
    model: cpus()[0]?.model,
    node: process.version,
    loadAverage: { start: load, end: load },
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** 2026-11-28T00-05-12: the file name's timestamp. */
const stampOf = (iso: string) => iso.slice(0, 19).replaceAll(":", "-");

/** Writes a run's file; finishes its machine and build fields; returns its path. */
export function writeResult(file: ResultFile): string {
  file.machine.loadAverage.end = round2(loadavg()[0] ?? 0);
  const built = distBuiltAt();
  if (built !== file.build.distBuiltAt && built !== null) file.build.distRebuiltAt = built;
  mkdirSync(resultsDir, { recursive: true });
  const path = join(resultsDir, `${file.scenario}-${stampOf(file.date)}.json`);
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
  return path;
}

/**
 * The latest successful run of `scenario` in `dir` (by the timestamp in the file name), and
 * its file name; undefined when there is none.
 */
export function latestResult(
  scenario: string,
  dir = resultsDir,
): { name: string; file: ResultFile } | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const pattern = new RegExp(
    `^${scenario.replace(/[-]/g, "\\-")}-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.json$`,
  );
  for (const name of names
    .filter((n) => pattern.test(n))
    .sort()
    .reverse()) {
    const file = JSON.parse(readFileSync(join(dir, name), "utf8")) as ResultFile;
    if (file.result !== null && file.scenario === scenario) return { name, file };
  }
  return undefined;
}
