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

/** A delivery the dispatcher claimed, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  workspaceId: string;
  payload: string;
  retryFrom: number;
  /** Attempts including this one. */
  attempts: number;
  /** Whether its endpoint is enabled: a disabled one's deliveries are given up, not sent. */
  enabled: boolean;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
}

/** How much one claim may take. */
export interface ClaimBounds {
  /** Deliveries in all. */
  batch: number;
  /** Attempts in flight per endpoint, and per workspace, on this node at most. */
  perEndpoint: number;
  perWorkspace: number;
  /** Attempts this node has in flight now, by endpoint id and by workspace id. */
  inflightByEndpoint: Readonly<Record<string, number>>;
  inflightByWorkspace: Readonly<Record<string, number>>;
  /** How long a claimed delivery is this node's: past it, another node may try it again. */
  leaseMs: number;
}

/**
 * Claims due deliveries: at most `perEndpoint` less what is in flight
 * for each endpoint and `perWorkspace` less what is in flight for each workspace (so one
 * tenant's backlog leaves room for the others), `batch` in all, the oldest due first. The
 * endpoints with pending deliveries are found with one index probe each, and each one's
 * due deliveries read in due order. Rows are locked `for update skip locked`, so nodes claim
 * side by side, and leased: each attempt counts and is not due again until the lease ends,
 * so a node that dies mid-attempt leaves it to be tried again (at least once). Deliveries of
 * a disabled endpoint are claimed too, to be given up: one written by a change that raced
 * with the disabling is not left pending for ever.
 */
export function deliveryClaim(
  q: Queryable,
  now: number,
  b: ClaimBounds,
): Promise<ClaimedDelivery[]> {
  return q.query<ClaimedDelivery>(
    `with recursive pending(endpoint_id) as (
       (select endpoint_id from webhook_deliveries
        where status = 'pending' order by endpoint_id limit 1)
       union all
       select (select d.endpoint_id from webhook_deliveries d
               where d.status = 'pending' and d.endpoint_id > p.endpoint_id
               order by d.endpoint_id limit 1)
       from pending p
       where p.endpoint_id is not null
     ), candidates as (
       select d.id, d.next_attempt_at, e.workspace_id,
         row_number() over (partition by e.id order by d.next_attempt_at, d.id) as rank_e,
         row_number() over (partition by e.workspace_id order by d.next_attempt_at, d.id) as rank_w,
         coalesce(($5::text::jsonb ->> e.id)::int, 0) as busy_e,
         coalesce(($6::text::jsonb ->> e.workspace_id)::int, 0) as busy_w
       from pending p
       join webhook_endpoints e on e.id = p.endpoint_id
       cross join lateral (
         select d.id, d.next_attempt_at
         from webhook_deliveries d
         where d.endpoint_id = e.id
           and d.status = 'pending'
           and d.next_attempt_at <= $1
         order by d.next_attempt_at
         limit $3
       ) d
     ), chosen as (
       select id from candidates
       where rank_e <= $3 - busy_e
         and rank_w <= $4 - busy_w
       order by next_attempt_at
       limit $2
     ), locked as (
       select d.id from webhook_deliveries d
       where d.id in (select id from chosen)
         and d.status = 'pending'
         and d.next_attempt_at <= $1
       for update skip locked
     )
     update webhook_deliveries d
     set next_attempt_at = $1::int8 + $7::int8, attempts = d.attempts + 1
     from locked, webhook_endpoints e
     where d.id = locked.id
       and e.id = d.endpoint_id
     returning d.id, d.endpoint_id as "endpointId", d.workspace_id as "workspaceId", d.payload,
       d.retry_from as "retryFrom", d.attempts, e.enabled, e.url, e.secret,
       e.previous_secret as "previousSecret",
       e.previous_secret_expires_at as "previousSecretExpiresAt"`,
    [
      now,
      b.batch,
      b.perEndpoint,
      b.perWorkspace,
      JSON.stringify(b.inflightByEndpoint),
      JSON.stringify(b.inflightByWorkspace),
      b.leaseMs,
    ],
  );
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
