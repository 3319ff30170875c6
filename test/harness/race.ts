import type { CallResult } from "./doors.js";
import { currentEngine } from "./engine.js";

/**
 * Rounds of each race. PGlite has one connection, so its transactions never overlap and a
 * race cannot happen there: two rounds check that the calls still answer as they should.
 */
export const ROUNDS = currentEngine() === "postgres" ? 10 : 2;

/**
 * Starts every call at once and waits for all. Each answer must have one of the `allowed`
 * statuses (a 5xx never is): otherwise this throws with the answers, so a failing round says
 * what the server answered.
 */
export async function together(
  calls: readonly (() => Promise<CallResult>)[],
  allowed: readonly number[],
): Promise<CallResult[]> {
  const results = await Promise.all(calls.map((call) => call()));
  const wrong = results.filter((r) => !allowed.includes(r.status));
  if (wrong.length > 0) {
    const seen = wrong.map((r) => `${r.status} ${r.error?.code ?? ""} ${r.error?.detail ?? ""}`);
    throw new Error(`answers outside ${allowed.join("/")}: ${seen.join("; ")}`);
  }
  return results;
}

/** The number of answers with this status. */
export function countOf(results: readonly CallResult[], status: number): number {
  return results.filter((r) => r.status === status).length;
}
