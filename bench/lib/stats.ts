// Rounding, percentiles and medians, the same way in every scenario.

/** `x` rounded to `digits` decimals (NaN and infinities stay as they are). */
export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const scale = 10 ** digits;
  return Math.round(x * scale) / scale;
}

/** Nearest-rank percentile `p` (0-100) of values sorted ascending; null when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const value = sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))];
  return value === undefined ? null : value;
}

export interface LatencySummary {
  count: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  p999Ms: number | null;
  maxMs: number | null;
}

/** Count, p50, p90, p99, p99.9 and max of latencies in ms (the input is not changed). */
export function summarize(latencies: ArrayLike<number>, digits = 3): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number) => {
    const v = percentile(sorted, p);
    return v === null ? null : round(v, digits);
  };
  return {
    count: sorted.length,
    p50Ms: at(50),
    p90Ms: at(90),
    p99Ms: at(99),
    p999Ms: at(99.9),
    maxMs: at(100),
  };
}

/** The lower median. */
export function median(xs: readonly number[]): number {
  const sorted = xs.toSorted((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

/** `a / b` rounded, or null when either is missing or `b` is zero. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || !b) return null;
  return round(a / b);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The median (lower) and the range of several runs' values; null when none has one. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(xs: readonly (number | null | undefined)[]): Spread | null {
  const have = xs.filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  if (have.length === 0) return null;
  return { median: median(have), min: Math.min(...have), max: Math.max(...have) };
}
