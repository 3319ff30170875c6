import type { Queryable } from "../db.js";

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
