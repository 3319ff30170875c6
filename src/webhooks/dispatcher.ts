import type { Logger } from "../log.js";
import { deliveryClaim } from "../storage/queries/webhook-claims.js";
import { type AttemptDeps, attemptDelivery } from "./attempt.js";

/**
 * What a claim's lease gives beyond the attempt's own timeout, to record its outcome: a node
 * that dies mid-attempt has its deliveries tried again this long after the timeout.
 */
const LEASE_MARGIN_MS = 10_000;

/** How the dispatcher paces itself. */
export interface DispatcherBounds {
  /** Attempts this node makes at once, per endpoint and per workspace. */
  concurrency: number;
  perEndpoint: number;
  perWorkspace: number;
  pollIntervalMs: number;
}

/**
 * One loop per node that sends the outbox: every poll (and at once when a change on this node
 * wrote deliveries, or an attempt ended) it claims due deliveries up to the free slots,
 * bounded per endpoint and per workspace, and attempts each without waiting for the others.
 * Claims lease their rows (see deliveryClaim), so nodes share the outbox and a node that dies
 * leaves its attempts to be made again.
 */
export class WebhookDispatcher {
  readonly #byEndpoint = new Map<string, number>();
  readonly #byWorkspace = new Map<string, number>();
  readonly #attempts = new Set<Promise<void>>();
  #inflight = 0;
  #claiming: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    private readonly deps: AttemptDeps & { log: Logger },
    private readonly bounds: DispatcherBounds,
  ) {}

  /**
   * Starts polling: every poll interval, a claim when `worthPolling` says there may be
   * something to claim (by default always). Wakes are not held back by it.
   */
  start(worthPolling: () => Promise<boolean> = async () => true): void {
    this.#timer = setInterval(() => {
      void worthPolling().then((yes) => {
        if (yes) this.wake();
      });
    }, this.bounds.pollIntervalMs);
    this.#timer.unref();
    this.wake();
  }

  /** Looks for due deliveries now (a claim in progress runs once more after it). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = this.#claim()
      .catch((err: unknown) => this.deps.log.warn({ err }, "claiming webhook deliveries failed"))
      .finally(() => {
        this.#claiming = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #claim(): Promise<void> {
    const free = this.bounds.concurrency - this.#inflight;
    if (free <= 0) return;
    const now = this.deps.clock.now();
    const claimed = await deliveryClaim(this.deps.db, now, {
      batch: free,
      perEndpoint: this.bounds.perEndpoint,
      perWorkspace: this.bounds.perWorkspace,
      inflightByEndpoint: Object.fromEntries(this.#byEndpoint),
      inflightByWorkspace: Object.fromEntries(this.#byWorkspace),
      leaseMs: this.deps.config.webhookTimeoutMs + LEASE_MARGIN_MS,
    });
    for (const d of claimed) {
      this.#count(d.endpointId, d.workspaceId, 1);
      const p: Promise<void> = attemptDelivery(this.deps, d).finally(() => {
        this.#count(d.endpointId, d.workspaceId, -1);
        this.#attempts.delete(p);
        // A slot is free, and the endpoint may have more due.
        this.wake();
      });
      this.#attempts.add(p);
    }
  }

  #count(endpointId: string, workspaceId: string, by: 1 | -1): void {
    this.#inflight += by;
    for (const [map, k] of [
      [this.#byEndpoint, endpointId],
      [this.#byWorkspace, workspaceId],
    ] as const) {
      const n = (map.get(k) ?? 0) + by;
      if (n === 0) map.delete(k);
      else map.set(k, n);
    }
  }

  /** Attempts in flight on this node. */
  inflight(): number {
    return this.#inflight;
  }

  /** Stops polling and waits for the claim and the attempts in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#claiming;
    await Promise.allSettled([...this.#attempts]);
  }
}
