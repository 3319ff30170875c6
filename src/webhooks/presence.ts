import type { InvalidationBus } from "../cache/bus.js";
import { TtlCache } from "../cache/ttl-cache.js";
import type { Clock } from "../domain/clock.js";
import type { Db } from "../storage/db.js";
import { anyEndpointEnabled } from "../storage/queries/webhook-endpoints.js";

const ANY = "any";

/**
 * Whether any workspace has an enabled webhook endpoint, as this node last read it: most
 * deployments have none, and then the dispatcher's poll has nothing to claim. An endpoint
 * change anywhere drops the answer on every node (the invalidation bus); it is read again
 * after `ttlMs` in any case, so a lost notification delays another node's deliveries by at
 * most that long (a change on this node wakes the dispatcher itself). A read that started
 * before a notification is not kept (TtlCache), so the change is never hidden for a ttl.
 */
export class EndpointPresence {
  /** One entry: the answer, under ANY. */
  readonly #cache: TtlCache<boolean>;

  constructor(
    private readonly db: Db,
    clock: Clock,
    bus: InvalidationBus,
    ttlMs = 10_000,
  ) {
    this.#cache = new TtlCache<boolean>(1, ttlMs, clock);
    bus.subscribe((e) => {
      if (e.kind === "webhooks" || e.kind === "all") this.#cache.delete(ANY);
    });
  }

  /** True when an endpoint may be enabled somewhere (a failed read says so too). */
  any(): Promise<boolean> {
    return this.#cache.load(ANY, () => anyEndpointEnabled(this.db)).catch(() => true);
  }
}
