import { deliveryBody } from "../domain/webhooks/events.js";
import type { Logger } from "../log.js";
import type { Db } from "../storage/db.js";
import { deliveryEnqueue } from "../storage/queries/webhook-deliveries.js";
import type { Subscriptions } from "./subscriptions.js";

/** Windows remembered as already announced on this node, at most. */
const MAX_REMEMBERED = 10_000;

/** A limit a verification was refused by. */
export interface ExceededLimit {
  name: string;
  limit: number;
  durationMs: number;
  /** End of the window, Unix ms. */
  reset: number;
}

/** Who was refused. */
export interface LimitedKey {
  workspaceId: string;
  keyId: string;
  apiId: string;
  identityId: string | null;
}

/**
 * Sends `ratelimit.exceeded` at most once per key, limit and window. A refused verification
 * calls `exceeded` without awaiting it: with no endpoint of the workspace subscribing it
 * returns after a map lookup (the subscriptions are cached per node) and writes nothing; a
 * window already announced from this node returns after another. Otherwise one insert writes
 * the event, with a dedupe key the database keeps unique per endpoint, so several nodes (or a
 * node that forgot) still send one per window; a hostile caller hammering a limited key costs
 * at most one write per window per node.
 */
export class RatelimitNotices {
  readonly #announced = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly subscriptions: Subscriptions,
    private readonly log: Logger,
    private readonly onWritten: () => void,
  ) {}

  /** Announces the limits `key` was refused by at `now`; never throws, never awaited. */
  exceeded(key: LimitedKey, limits: readonly ExceededLimit[], now: number): void {
    const types = this.subscriptions.cached(key.workspaceId);
    if (types && !types.has("ratelimit.exceeded")) return;
    const fresh = limits.filter((l) => !this.#announced.has(this.#dedupeKey(key, l)));
    if (fresh.length === 0) return;
    void this.#write(key, fresh, now, types === undefined).catch((err: unknown) =>
      this.log.warn({ err }, "writing a ratelimit.exceeded event failed"),
    );
  }

  #dedupeKey(key: LimitedKey, l: ExceededLimit): string {
    return `ratelimit:${key.keyId}:${l.name}:${l.reset}`;
  }

  async #write(key: LimitedKey, limits: readonly ExceededLimit[], now: number, load: boolean) {
    if (load && !(await this.subscriptions.load(key.workspaceId)).has("ratelimit.exceeded")) return;
    const events = limits.map((l) => {
      const dedupeKey = this.#dedupeKey(key, l);
      this.#remember(dedupeKey);
      const data = {
        keyId: key.keyId,
        apiId: key.apiId,
        ...(key.identityId ? { identityId: key.identityId } : {}),
        ratelimit: l.name,
        limit: l.limit,
        durationMs: l.durationMs,
        windowStart: l.reset - l.durationMs,
        reset: l.reset,
      };
      return {
        type: "ratelimit.exceeded",
        body: deliveryBody({ type: "ratelimit.exceeded", data }, now),
        dedupeKey,
      };
    });
    if ((await deliveryEnqueue(this.db, key.workspaceId, events, now)) > 0) this.onWritten();
  }

  #remember(k: string) {
    if (this.#announced.size >= MAX_REMEMBERED) {
      const oldest = this.#announced.values().next().value;
      if (oldest !== undefined) this.#announced.delete(oldest);
    }
    this.#announced.add(k);
  }
}
