/** One counter a decision takes tokens from. */
export interface LimitCheck {
  /**
   * The counter's name, hash-tagged by workspace so one workspace's counters live on one
   * Redis Cluster slot: `{ws_...}:<scope>:<owner>:<name>`. The window length is added by
   * the backend: changing a duration starts a separate counter.
   */
  counter: string;
  /** Tokens per window; 0 always denies. */
  limit: number;
  durationMs: number;
  /** Tokens to take; 0 checks without taking. */
  cost: number;
}

/** The state of one counter after a decision. */
export interface LimitOutcome {
  /** Whether this counter had room for its cost. */
  passed: boolean;
  /** Tokens left in the window (with nothing taken when the decision failed). */
  remaining: number;
  /** End of the current window, Unix ms. */
  reset: number;
}

/** An all-or-nothing decision over several counters. */
export interface LimitDecision {
  success: boolean;
  outcomes: LimitOutcome[];
}

/**
 * A rate limiter with fixed windows aligned to the Unix epoch. A decision over several
 * counters is all-or-nothing: either every counter had room and every cost was taken, or
 * nothing was taken. `refund` gives back what a successful decision took (verification
 * refunds its tokens when the credits then fail), within the same window.
 */
export interface Limiter {
  check(checks: readonly LimitCheck[], now: number): Promise<LimitDecision>;
  refund(checks: readonly LimitCheck[], now: number): Promise<void>;
  close(): Promise<void>;
}

/** The counter name of a limit owned by a key or an identity. */
export function counterName(
  workspaceId: string,
  scope: string,
  owner: string,
  name: string,
): string {
  return `{${workspaceId}}:${scope}:${owner}:${name}`;
}
