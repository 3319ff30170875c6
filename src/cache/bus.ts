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
  /**
   * A key changed, was created (its hash now exists in its workspace and API) or was
   * deleted. Its workspace and API name the scopes its cached lookups were made in.
   */
  | { kind: "key"; workspaceId: string; apiId: string; id: string; hash: string }
  /** A workspace was created: the instance may no longer hold just one. */
  | { kind: "workspaces" }
  /** A rate-limit namespace or one of its overrides changed. */
  | { kind: "namespace"; workspaceId: string; id: string }
  /** A webhook endpoint of the workspace was made, changed or removed. */
  | { kind: "webhooks"; workspaceId: string };

type Listener = (event: Invalidation) => void;

/** NOTIFY payloads must stay under 8000 bytes; a larger batch is split over several. */
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
  private stopped = false;

  /** `onRemote` is told of every notification received from another node (a metric). */
  constructor(
    readonly nodeId: string,
    private readonly onRemote: () => void = () => {},
  ) {}

  subscribe(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * Queues the events for delivery to other nodes at commit of `tx`, in as many
   * notifications as their size needs (a migration of 1,000 keys takes about 17): sent as one
   * "drop everything" instead, a large change would empty every cache of every node.
   */
  async notify(tx: Queryable, events: readonly Invalidation[]): Promise<void> {
    for (const payload of payloads(this.nodeId, events)) {
      await tx.query("select pg_notify($1, $2)", [INVALIDATION_CHANNEL, payload]);
    }
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
    // postgres.js re-subscribes with new listeners when its LISTEN connection comes back,
    // which the unlisten it returned does not remove: after a stop, notifications are ignored.
    this.stopped = true;
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
    if (this.stopped || message.o === this.nodeId || !Array.isArray(message.e)) return;
    this.onRemote();
    this.applyLocal(message.e as Invalidation[]);
  }
}

/** NOTIFY payloads carrying `events` in order, each under MAX_PAYLOAD_BYTES. */
export function payloads(nodeId: string, events: readonly Invalidation[]): string[] {
  const out: string[] = [];
  const head = `{"o":${JSON.stringify(nodeId)},"e":[`;
  const empty = Buffer.byteLength(head) + 2; // with the closing "]}"
  let parts: string[] = [];
  let size = empty;
  const close = () => {
    if (parts.length > 0) out.push(`${head}${parts.join(",")}]}`);
    parts = [];
    size = empty;
  };
  for (const e of events) {
    const part = JSON.stringify(e);
    const bytes = Buffer.byteLength(part) + 1;
    if (size + bytes > MAX_PAYLOAD_BYTES) close();
    // One event alone cannot be that large (ids and hashes); if it were, drop everything.
    if (empty + bytes > MAX_PAYLOAD_BYTES) {
      out.push(JSON.stringify({ o: nodeId, e: [{ kind: "all" }] }));
      continue;
    }
    parts.push(part);
    size += bytes;
  }
  close();
  return out;
}
