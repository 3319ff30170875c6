/** The source of "now" in Unix milliseconds. Tests replace it to move time without sleeping. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };
