import type { Db, Queryable } from "../storage/db.js";

/**
 * A change that can alter a cached answer. Every mutation publishes the ones it causes;
 * `all` tells a node to drop everything (sent after a missed notification).
 */
export type Invalidation =
  | { kind: "all" }
  | { kind: "rootKeys" }
  | { kind: "api"; workspaceId: string; id: string }
  /** An identity's metadata, rate limits or existence changed. */
  | { kind: "identity"; workspaceId: string; id: string }
  /** Roles or permissions of the workspace changed: any key's permissions may differ. */
  | { kind: "rbac"; workspaceId: string }
  /** A key changed, was created (its hash now exists) or was deleted. */
  | { kind: "key"; workspaceId: string; id: string; hash: string }
  /** A rate-limit namespace or one of its overrides changed. */
  | { kind: "namespace"; workspaceId: string; id: string };

type Listener = (event: Invalidation) => void;

/** NOTIFY payloads must stay under 8000 bytes; a larger batch is sent as `all`. */
const MAX_PAYLOAD_BYTES = 7900;
/** The PostgreSQL channel of invalidations. */
export const INVALIDATION_CHANNEL = "latchkey_invalidation";

/**
 * The invalidation bus. A mutation hands its events to `notify` inside its transaction
 * (PostgreSQL delivers the NOTIFY at commit, to every node) and to `applyLocal` right
 * after the commit (this node). A node ignores its own notifications, and drops its
 * whole cache whenever its LISTEN session is (re)established, since it may have missed
 * notifications while disconnected.
 */
export class InvalidationBus {
  private readonly listeners: Listener[] = [];
  private unlisten: (() => Promise<void>) | undefined;

  /** `onRemote` is told of every notification received from another node (a metric). */
  constructor(
    readonly nodeId: string,
    private readonly onRemote: () => void = () => {},
  ) {}

  subscribe(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** Queues the events for delivery to other nodes at commit of `tx`. */
  async notify(tx: Queryable, events: readonly Invalidation[]): Promise<void> {
    if (events.length === 0) return;
    let payload = JSON.stringify({ o: this.nodeId, e: events });
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      payload = JSON.stringify({ o: this.nodeId, e: [{ kind: "all" }] });
    }
    await tx.query("select pg_notify($1, $2)", [INVALIDATION_CHANNEL, payload]);
  }

  /** Applies events to this node's caches. */
  applyLocal(events: readonly Invalidation[]): void {
    for (const e of events) for (const l of this.listeners) l(e);
  }

  /** Starts listening for other nodes' invalidations. */
  async start(db: Db): Promise<void> {
    this.unlisten = await db.listen(
      INVALIDATION_CHANNEL,
      (payload) => this.onNotification(payload),
      () => this.applyLocal([{ kind: "all" }]),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = undefined;
  }

  private onNotification(payload: string): void {
    let message: { o?: unknown; e?: unknown };
    try {
      message = JSON.parse(payload) as { o?: unknown; e?: unknown };
    } catch {
      this.applyLocal([{ kind: "all" }]);
      return;
    }
    if (message.o === this.nodeId || !Array.isArray(message.e)) return;
    this.onRemote();
    this.applyLocal(message.e as Invalidation[]);
  }
}
