/** A fixed rate-limit window aligned to the Unix epoch: [start, reset). */
export interface Window {
  start: number;
  /** End of the window (Unix ms): when the counter resets. */
  reset: number;
}

/** The window of `durationMs` that contains `now`. */
export function windowAt(now: number, durationMs: number): Window {
  const start = Math.floor(now / durationMs) * durationMs;
  return { start, reset: start + durationMs };
}
