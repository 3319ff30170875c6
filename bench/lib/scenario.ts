// What a scenario is: a module exporting one `Scenario`, listed in bench/scenarios/index.ts.
import type { QuietSettings } from "./quiet.ts";

export interface RunContext<S> {
  settings: S;
  quick: boolean;
  /** Records a failed check: the run goes on, the result lists it, the exit code is 1. */
  check(ok: boolean, problem: string): boolean;
  /** How long to wait for a quiet machine before a measurement (measureQuietly). */
  quiet: QuietSettings;
}

export interface Image {
  /** File name under docs/images/. */
  file: string;
  png: Uint8Array;
}

export interface Scenario<S extends object, R> {
  name: string;
  /** One line: what it measures. */
  description: string;
  /**
   * The settings of a run, from `quick` (short durations for a smoke run), the words after
   * the scenario's name on the command line, and the BENCH_* variables. Kept in the result.
   */
  settings(options: { quick: boolean; args: string[] }): S;
  run(context: RunContext<S>): Promise<R>;
  /** The generated section of docs/benchmarks.md from one result (markdown). */
  render(result: R, settings: S): string;
  /** Images that section shows, drawn from the result (written to docs/images/). */
  images?(result: R, settings: S): Image[];
  /** Flags of the scenario's own Node process (it runs alone in one). */
  nodeArgs?: string[];
}

/** Typed identity: checks a scenario against its settings and result types. */
export function defineScenario<S extends object, R>(scenario: Scenario<S, R>): Scenario<S, R> {
  return scenario;
}

/** A number from BENCH_<name>, or the default (the quick one under --quick). */
export function setting(name: string, normal: number, quick: number, isQuick: boolean): number {
  const raw = process.env[name];
  if (raw !== undefined && raw !== "") {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new Error(`${name}=${raw}: not a number`);
    return n;
  }
  return isQuick ? quick : normal;
}

/** Refuses words a scenario does not take. */
export function noArgs(name: string, args: string[]): void {
  if (args.length > 0) throw new Error(`${name} takes no arguments (got ${args.join(" ")})`);
}

/** The parts of a scenario its words name (all of them for none); refuses a word naming none. */
export function chosenParts<P extends string>(
  name: string,
  all: readonly P[],
  args: string[],
): P[] {
  const unknown = args.filter((a) => !(all as readonly string[]).includes(a));
  if (unknown.length > 0) throw new Error(`${name}: unknown part(s) ${unknown.join(", ")}`);
  return args.length > 0 ? all.filter((p) => args.includes(p)) : [...all];
}
