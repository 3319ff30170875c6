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
  /**
   * Made up because the backend was unreachable (RATELIMIT_FAILURE_MODE=open): nothing was
   * taken, so there is nothing to refund.
   */
  degraded?: true;
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

/** A counter's state before a decision: what it held in the current window. */
export interface CounterState {
  check: LimitCheck;
  reset: number;
  /** Tokens already taken in the window. */
  current: number;
}

/**
 * The all-or-nothing decision over counters read at one instant: it succeeds when every
 * counter has room for its cost (a limit of 0 never has room). Remaining counts are
 * after the cost when the decision succeeds; when it fails, a counter with room shows its
 * remaining as if nothing was taken, and a counter without room shows 0.
 */
export function decideAll(states: readonly CounterState[]): LimitDecision {
  const fits = states.map((s) => s.check.limit > 0 && s.current + s.check.cost <= s.check.limit);
  const success = fits.every(Boolean);
  const outcomes = states.map((s, i) => {
    const passed = fits[i] as boolean;
    const left = !passed ? 0 : s.check.limit - s.current - (success ? s.check.cost : 0);
    return { passed, remaining: Math.max(0, left), reset: s.reset };
  });
  return { success, outcomes };
}
