import type { HandlerContext } from "@connectrpc/connect";
import type { Invalidation } from "../cache/bus.js";
import { deliveryBody, type WebhookEvent } from "../domain/webhooks/events.js";
import { errors, type ServiceError } from "../errors/service-error.js";
import { isTransientConflict, type Queryable, violatedUniqueIndex } from "../storage/db.js";
import { type AuditEntry, auditInsert } from "../storage/queries/audit-logs.js";
import { deliveryEnqueue } from "../storage/queries/webhook-deliveries.js";
import { callOf } from "./call.js";
import type { Deps } from "./deps.js";

/** The audit fields a procedure supplies; actor, time and request id come from the call. */
export type AuditRecord = Pick<
  AuditEntry,
  "event" | "resourceType" | "resourceId" | "description"
> & {
  workspaceId?: string;
};

/** The side effects a mutation declares while it runs. */
export interface Change {
  /** Records an audit event, written in the same transaction. */
  audit(record: AuditRecord): void;
  /** Declares a cache invalidation, sent to every node at commit. */
  invalidate(event: Invalidation): void;
  /**
   * Emits a webhook event: at commit, in the same transaction, a delivery of it is written
   * for every enabled endpoint of the workspace (the actor's unless given) that subscribes
   * to its type; with none, nothing is written. The one way every change sends an event.
   */
  emit(event: WebhookEvent, workspaceId?: string): void;
  /** The time of the change (the clock read once, at the start). */
  readonly now: number;
}

/** Who performs a change, for the audit log. */
export interface Actor {
  type: AuditEntry["actorType"];
  id: string;
  workspaceId: string;
  requestId: string | null;
}

/**
 * What a unit of work answers when it loses a true conflict: for each unique index it may
 * break (by name), the catalog 409 to raise instead of the driver's error. Two callers
 * creating one name at once both pass every check; the index decides, and the loser is
 * told why, not given a 500.
 */
export type UniqueConflicts = Readonly<Record<string, () => ServiceError>>;

/** Runs of a unit of work that PostgreSQL aborted for a concurrent one, before giving up. */
const MAX_ATTEMPTS = 3;

/**
 * Runs `fn` as one unit of work: its writes, its audit records and its invalidation
 * NOTIFY commit together or not at all; once committed, its invalidations are applied
 * to this node's caches before the caller answers. A unit that PostgreSQL aborts as a
 * deadlock victim (or a serialization failure) is run again from the start: two changes
 * may lock the same keys in opposite orders (updateCredits of a rerolled key locks it, then
 * the key holding its balance; rerollKey of that key locks it, then repoints the first).
 * `fn` must therefore only change the database and the `change` it is given.
 *
 * A unit that reads a row and then writes on the strength of it locks that row in the read
 * (or writes with an upsert), so that concurrent units serialise on it and each sees what the
 * other committed. A unique violation on an index named in `conflicts` becomes that 409; on
 * any other index it is a bug and surfaces as one.
 */
export async function mutateAs<T>(
  deps: Pick<Deps, "db" | "bus" | "clock" | "webhooks">,
  actor: Actor,
  fn: (tx: Queryable, change: Change) => Promise<T>,
  conflicts: UniqueConflicts = {},
): Promise<T> {
  const now = deps.clock.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptOnce(deps, actor, now, fn);
    } catch (err) {
      const index = violatedUniqueIndex(err);
      const lost =
        index !== undefined && Object.hasOwn(conflicts, index) ? conflicts[index] : undefined;
      if (lost) throw lost();
      if (attempt >= MAX_ATTEMPTS || !isTransientConflict(err)) throw err;
    }
  }
}

async function attemptOnce<T>(
  deps: Pick<Deps, "db" | "bus" | "webhooks">,
  actor: Actor,
  now: number,
  fn: (tx: Queryable, change: Change) => Promise<T>,
): Promise<T> {
  const records: AuditEntry[] = [];
  const events: Invalidation[] = [];
  const emitted = new Map<string, WebhookEvent[]>();
  const correlationId = actor.requestId;
  const change: Change = {
    now,
    audit: (r) =>
      records.push({
        workspaceId: r.workspaceId ?? actor.workspaceId,
        time: now,
        event: r.event,
        actorType: actor.type,
        actorId: actor.id,
        resourceType: r.resourceType,
        resourceId: r.resourceId,
        description: r.description,
        requestId: actor.requestId,
        correlationId,
      }),
    invalidate: (e) => events.push(e),
    emit(e, workspaceId = actor.workspaceId) {
      const list = emitted.get(workspaceId);
      if (list) list.push(e);
      else emitted.set(workspaceId, [e]);
    },
  };
  let deliveries = 0;
  let result: T;
  try {
    result = await deps.db.transaction(async (tx) => {
      const value = await fn(tx, change);
      await auditInsert(tx, records);
      for (const [workspaceId, list] of emitted) {
        const outbox = list.map((e) => ({
          type: e.type,
          body: deliveryBody(e, now),
          dedupeKey: null,
        }));
        deliveries += await deliveryEnqueue(tx, workspaceId, outbox, now);
      }
      await deps.bus.notify(tx, events);
      return value;
    });
  } catch (err) {
    // The commit may have happened with its answer lost (the connection broke): this node
    // ignores its own NOTIFY, so it drops the entries now. Dropping them for a change that
    // did not commit only costs a cache miss.
    deps.bus.applyLocal(events);
    throw err;
  }
  deps.bus.applyLocal(events);
  // Other nodes find the deliveries at their next poll; this one starts on them at once.
  if (deliveries > 0) deps.webhooks?.wake();
  return result;
}

/**
 * `mutateAs` for a procedure: the actor is the call's root key. Only procedures that require
 * authentication change anything, so a call without a principal here is a 500.
 */
export function mutate<T>(
  deps: Deps,
  ctx: HandlerContext,
  fn: (tx: Queryable, change: Change) => Promise<T>,
  conflicts?: UniqueConflicts,
): Promise<T> {
  const call = callOf(ctx.values);
  const p = call.principal;
  if (!p) throw errors.unexpected(new TypeError("mutation without an authenticated principal"));
  return mutateAs(
    deps,
    { type: "rootkey", id: p.rootKeyId, workspaceId: p.workspaceId, requestId: call.requestId },
    fn,
    conflicts,
  );
}
