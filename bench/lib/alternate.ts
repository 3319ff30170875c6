// Timing ways of doing one operation against each other, in process.
import { median, round } from "./stats.ts";

/** Runs an operation `n` times (it may return a promise). */
export type Op = (n: number) => unknown;

/** Median ns per operation of each way, in the order given, with every round's figure. */
export interface Alternated {
  ns: number[];
  spread: number[][];
}

/**
 * Median ns per operation of each of `ways`, after a warm-up of each, taken in turn `rounds`
 * times so that the machine's drift during the run weighs on all of them alike.
 */
export async function alternate(rounds: number, n: number, ways: Op[]): Promise<Alternated> {
  for (const fn of ways) await fn(Math.min(n, 20_000));
  const t = ways.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (const [i, fn] of ways.entries()) {
      const t0 = process.hrtime.bigint();
      await fn(n);
      t[i]?.push(Number(process.hrtime.bigint() - t0) / n);
    }
  }
  return {
    ns: t.map((x) => round(median(x), 1)),
    spread: t.map((x) => x.map((y) => round(y, 1))),
  };
}
