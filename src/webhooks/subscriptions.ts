import type { InvalidationBus } from "../cache/bus.js";
import type { Clock } from "../domain/clock.js";
import type { Db } from "../storage/db.js";
import { endpointSubscribedTypes } from "../storage/queries/webhook-endpoints.js";

/** Workspaces whose subscriptions are kept at most; the oldest is dropped beyond. */
const MAX_WORKSPACES = 10_000;

/**
 * Which event types each workspace's enabled endpoints subscribe to, as this node last read
 * them: for events raised outside any change (a refused verification), so that a workspace
 * with no endpoint costs one map lookup and no query. An endpoint change drops its
 * workspace's entry on every node (the invalidation bus); an entry is read again after
 * `ttlMs` in any case, so a lost notification costs at most that long.
 */
export class Subscriptions {
  readonly #entries = new Map<string, { types: ReadonlySet<string>; until: number }>();
  readonly #loading = new Map<string, Promise<ReadonlySet<string>>>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    bus: InvalidationBus,
    private readonly ttlMs = 10_000,
  ) {
    bus.subscribe((e) => {
      if (e.kind === "webhooks") this.#entries.delete(e.workspaceId);
      else if (e.kind === "all") this.#entries.clear();
    });
  }

  /** The cached answer, or undefined when it must be read (`load`). */
  cached(workspaceId: string): ReadonlySet<string> | undefined {
    const e = this.#entries.get(workspaceId);
    return e && e.until > this.clock.now() ? e.types : undefined;
  }

  /** Reads the workspace's subscriptions (one query per workspace at a time). */
  load(workspaceId: string): Promise<ReadonlySet<string>> {
    let p = this.#loading.get(workspaceId);
    if (!p) {
      p = endpointSubscribedTypes(this.db, workspaceId)
        .then((types) => {
          const set = new Set(types);
          if (this.#entries.size >= MAX_WORKSPACES) {
            const oldest = this.#entries.keys().next().value;
            if (oldest !== undefined) this.#entries.delete(oldest);
          }
          this.#entries.set(workspaceId, { types: set, until: this.clock.now() + this.ttlMs });
          return set;
        })
        .finally(() => this.#loading.delete(workspaceId));
      this.#loading.set(workspaceId, p);
    }
    return p;
  }
}
