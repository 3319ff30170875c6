/** Addresses one window tracks at most; the rest share one count (memory stays bounded). */
export const MAX_TRACKED_ADDRESSES = 10_000;
const WINDOW_MS = 60_000;
const OVERFLOW = "\u0000overflow";

/**
 * Bounds on an anonymous endpoint that reads a secret: at most `perAddress` attempts per
 * client address and minute, and `total` from all addresses together, counted in fixed
 * windows aligned to the minute. In memory only, so an attempt never costs storage; each
 * process counts its own. Beyond `MAX_TRACKED_ADDRESSES` addresses in one window, new ones
 * share one count, so a flood from many addresses cannot grow the map (it can only make those
 * addresses wait, and the total bound holds anyway).
 */
export class AttemptWindow {
  private windowStart = Number.NEGATIVE_INFINITY;
  private counts = new Map<string, number>();
  private all = 0;

  constructor(
    private readonly perAddress: number,
    private readonly total: number,
  ) {}

  /** Counts an attempt from `address` at `now`; false when it is over a bound (not counted). */
  admit(address: string, now: number): boolean {
    const start = now - (now % WINDOW_MS);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.counts.clear();
      this.all = 0;
    }
    const slot =
      this.counts.has(address) || this.counts.size < MAX_TRACKED_ADDRESSES ? address : OVERFLOW;
    const n = this.counts.get(slot) ?? 0;
    if (n >= this.perAddress || this.all >= this.total) return false;
    this.counts.set(slot, n + 1);
    this.all++;
    return true;
  }

  /** Milliseconds from `now` until the current window ends (for Retry-After). */
  retryAfterMs(now: number): number {
    return WINDOW_MS - (now % WINDOW_MS);
  }
}
