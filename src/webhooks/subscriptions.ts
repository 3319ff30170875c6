import type { InvalidationBus } from "../cache/bus.js";
import { TtlCache } from "../cache/ttl-cache.js";
import type { Clock } from "../domain/clock.js";
import type { Db } from "../storage/db.js";
import { endpointSubscribedTypes } from "../storage/queries/webhook-endpoints.js";

/** Workspaces whose subscriptions are kept at most; the least recently used is dropped beyond. */
const MAX_WORKSPACES = 10_000;

/**
 * Which event types each workspace's enabled endpoints subscribe to, as this node last read
 * them: for events raised outside any change (a refused verification), so that a workspace
 * with no endpoint costs one map lookup and no query. An endpoint change drops its
 * workspace's entry on every node (the invalidation bus); an entry is read again after
 * `ttlMs` in any case, so a lost notification costs at most that long.
 */
export class Subscriptions {
  readonly #cache: TtlCache<ReadonlySet<string>>;

  constructor(
    private readonly db: Db,
    clock: Clock,
    bus: InvalidationBus,
    ttlMs = 10_000,
  ) {
    this.#cache = new TtlCache<ReadonlySet<string>>(MAX_WORKSPACES, ttlMs, clock);
    bus.subscribe((e) => {
      if (e.kind === "webhooks") this.#cache.delete(e.workspaceId);
      else if (e.kind === "all") this.#cache.clear();
    });
  }

  /** The cached answer, or undefined when it must be read (`load`). */
  cached(workspaceId: string): ReadonlySet<string> | undefined {
    return this.#cache.get(workspaceId);
  }

  /** Reads the workspace's subscriptions (one query per workspace at a time). */
  load(workspaceId: string): Promise<ReadonlySet<string>> {
    return this.#cache.load(workspaceId, async () => {
      return new Set(await endpointSubscribedTypes(this.db, workspaceId));
    });
  }
}
