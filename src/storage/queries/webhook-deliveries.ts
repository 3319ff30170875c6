import type { Queryable } from "../db.js";

/** An event to fan out to the workspace's endpoints that subscribe to its type. */
export interface OutboxEvent {
  type: string;
  /** The body, exactly as it will be signed and sent. */
  body: string;
  /** At most one delivery per endpoint and key (null: no such bound). */
  dedupeKey: string | null;
}

/**
 * Writes a pending delivery of each event to every enabled endpoint of the workspace that
 * subscribes to its type, due at once, in one statement (none when no endpoint subscribes);
 * an event whose dedupe key an endpoint already has is not written again for it. Call it in
 * the transaction of the change the events describe. Answers how many were written.
 */
export async function deliveryEnqueue(
  q: Queryable,
  workspaceId: string,
  events: readonly OutboxEvent[],
  now: number,
): Promise<number> {
  if (events.length === 0) return 0;
  const rows = await q.query<{ n: number }>(
    `with written as (
       insert into webhook_deliveries (id, workspace_id, endpoint_id, event_type, payload,
         status, created_at, next_attempt_at, retry_from, dedupe_key)
       select 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.workspace_id, e.id,
         ev.type, ev.body, 'pending', $3, $3, $3, ev.dedupe
       from unnest($2::text[], $4::text[], $5::text[]) with ordinality as ev(type, body, dedupe, n)
       join webhook_endpoints e
         on e.workspace_id = $1
        and e.enabled
        and ev.type = any(e.event_types)
       order by ev.n, e.id
       on conflict (endpoint_id, dedupe_key) where dedupe_key is not null do nothing
       returning 1
     )
     select count(*)::int as n from written`,
    [
      workspaceId,
      events.map((e) => e.type),
      now,
      events.map((e) => e.body),
      events.map((e) => e.dedupeKey),
    ],
  );
  return rows[0]?.n ?? 0;
}

/** One delivery to one chosen endpoint (events whose recipients differ by threshold). */
export interface DirectDelivery {
  endpointId: string;
  workspaceId: string;
  type: string;
  body: string;
}

/** Writes pending deliveries to chosen endpoints, due at once; answers how many. */
export async function deliveryInsert(
  q: Queryable,
  deliveries: readonly DirectDelivery[],
  now: number,
): Promise<number> {
  if (deliveries.length === 0) return 0;
  await q.query(
    `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_type, payload, status,
       created_at, next_attempt_at, retry_from)
     select 'msg_' || replace(gen_random_uuid()::text, '-', ''), d.workspace_id, d.endpoint_id,
       d.type, d.body, 'pending', $1, $1, $1
     from unnest($2::text[], $3::text[], $4::text[], $5::text[])
       as d(endpoint_id, workspace_id, type, body)`,
    [
      now,
      deliveries.map((d) => d.endpointId),
      deliveries.map((d) => d.workspaceId),
      deliveries.map((d) => d.type),
      deliveries.map((d) => d.body),
    ],
  );
  return deliveries.length;
}

/** One attempt's outcome as stored. */
export interface AttemptRow {
  at: number;
  status: "delivered" | "failed" | "error";
  responseStatus: number | null;
  latencyMs: number;
  error: string | null;
  nextRetryAt: number | null;
}

/**
 * Records an attempt and the delivery's state after it: delivered, pending again at
 * `nextRetryAt`, or failed (given up) when the attempt failed without a next retry.
 */
export async function deliveryRecordAttempt(
  q: Queryable,
  id: string,
  a: AttemptRow,
): Promise<void> {
  const status =
    a.status === "delivered" ? "delivered" : a.nextRetryAt === null ? "failed" : "pending";
  await q.query(
    `with attempt as (
       insert into webhook_attempts (delivery_id, at, status, response_status, latency_ms,
         error, next_retry_at)
       select id, $2, $3, $4, $5, $6, $7 from webhook_deliveries where id = $1
     )
     update webhook_deliveries
     set status = $8, next_attempt_at = $7
     where id = $1`,
    [id, a.at, a.status, a.responseStatus, a.latencyMs, a.error, a.nextRetryAt, status],
  );
}

/** A delivery as listed. */
export interface DeliveryRow {
  id: string;
  eventType: string;
  status: "pending" | "delivered" | "failed";
  createdAt: number;
  nextAttemptAt: number | null;
}

/**
 * A page of an endpoint's deliveries, newest first, from the cursor (`<createdAt>:<id>`, the
 * first row of the page) on: `limit` rows.
 */
export function deliveryList(
  q: Queryable,
  endpointId: string,
  cursor: { createdAt: number; id: string } | undefined,
  limit: number,
): Promise<DeliveryRow[]> {
  return q.query<DeliveryRow>(
    `select id, event_type as "eventType", status, created_at as "createdAt",
       next_attempt_at as "nextAttemptAt"
     from webhook_deliveries
     where endpoint_id = $1
       and (created_at, id) <= ($2::int8, $3::text)
     order by created_at desc, id desc
     limit $4`,
    [endpointId, cursor?.createdAt ?? Number.MAX_SAFE_INTEGER, cursor?.id ?? "\u{10FFFF}", limit],
  );
}

/** The latest `perDelivery` attempts of each delivery, oldest first within one. */
export function attemptsOf(
  q: Queryable,
  deliveryIds: readonly string[],
  perDelivery: number,
): Promise<(AttemptRow & { deliveryId: string })[]> {
  if (deliveryIds.length === 0) return Promise.resolve([]);
  return q.query<AttemptRow & { deliveryId: string }>(
    `select a.* from unnest($1::text[]) as d(id)
     cross join lateral (
       select delivery_id as "deliveryId", at, status, response_status as "responseStatus",
         latency_ms as "latencyMs", error, next_retry_at as "nextRetryAt"
       from webhook_attempts
       where delivery_id = d.id
       order by at desc
       limit $2
     ) a
     order by a."deliveryId", a.at`,
    [deliveryIds, perDelivery],
  );
}

/**
 * Makes a delivery of the endpoint pending again, due at once, with a fresh backoff and
 * retry window; answers whether the endpoint has it.
 */
export async function deliveryRedeliver(
  q: Queryable,
  endpointId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const rows = await q.query(
    `update webhook_deliveries
     set status = 'pending', next_attempt_at = $3, attempts = 0, retry_from = $3
     where id = $2
       and endpoint_id = $1
     returning 1`,
    [endpointId, id, now],
  );
  return rows.length > 0;
}

/**
 * Deletes up to `limit` finished (delivered or failed) deliveries made before `beforeMs`,
 * with their attempts; answers how many went. Harmless on several processes at once.
 */
export async function deliveryDeleteFinishedBefore(
  q: Queryable,
  beforeMs: number,
  limit: number,
): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `with gone as (
       delete from webhook_deliveries
       where id = any(array(
         select id from webhook_deliveries
         where created_at < $1 and status <> 'pending'
         limit $2))
       returning 1
     )
     select count(*)::int as n from gone`,
    [beforeMs, limit],
  );
  return rows[0]?.n ?? 0;
}
