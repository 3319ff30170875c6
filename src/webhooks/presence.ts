import type { InvalidationBus } from "../cache/bus.js";
import type { Clock } from "../domain/clock.js";
import type { Db } from "../storage/db.js";
import { anyEndpointEnabled } from "../storage/queries/webhook-endpoints.js";

/**
 * Whether any workspace has an enabled webhook endpoint, as this node last read it: most
 * deployments have none, and then the dispatcher's poll has nothing to claim. An endpoint
 * change anywhere drops the answer on every node (the invalidation bus); it is read again
 * after `ttlMs` in any case, so a lost notification delays another node's deliveries by at
 * most that long (a change on this node wakes the dispatcher itself).
 */
export class EndpointPresence {
  #known: { any: boolean; until: number } | undefined;
  #loading: Promise<boolean> | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    bus: InvalidationBus,
    private readonly ttlMs = 10_000,
  ) {
    bus.subscribe((e) => {
      if (e.kind === "webhooks" || e.kind === "all") this.#known = undefined;
    });
  }

  /** True when an endpoint may be enabled somewhere (a failed read says so too). */
  any(): Promise<boolean> {
    const k = this.#known;
    if (k && k.until > this.clock.now()) return Promise.resolve(k.any);
    this.#loading ??= anyEndpointEnabled(this.db)
      .then((any) => {
        this.#known = { any, until: this.clock.now() + this.ttlMs };
        return any;
      })
      .catch(() => true)
      .finally(() => {
        this.#loading = undefined;
      });
    return this.#loading;
  }
}
