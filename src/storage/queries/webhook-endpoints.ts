import type { Queryable } from "../db.js";

/** A webhook endpoint as stored; the secrets in their stored (sealed or plain) form. */
export interface EndpointRow {
  id: string;
  workspaceId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  creditsLowThreshold: number | null;
  enabled: boolean;
  disabledReason: string | null;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  failingSince: number | null;
  createdAt: number;
  updatedAt: number | null;
}

const COLUMNS = `id, workspace_id as "workspaceId", url, description, event_types as "eventTypes",
  credits_low_threshold as "creditsLowThreshold", enabled, disabled_reason as "disabledReason",
  secret, previous_secret as "previousSecret",
  previous_secret_expires_at as "previousSecretExpiresAt", failing_since as "failingSince",
  created_at as "createdAt", updated_at as "updatedAt"`;

/** Inserts an endpoint. */
export async function endpointInsert(q: Queryable, row: EndpointRow): Promise<void> {
  await q.query(
    `insert into webhook_endpoints (id, workspace_id, url, description, event_types,
       credits_low_threshold, enabled, secret, created_at)
     values ($1, $2, $3, $4, $5::text[], $6, $7, $8, $9)`,
    [
      row.id,
      row.workspaceId,
      row.url,
      row.description,
      row.eventTypes,
      row.creditsLowThreshold,
      row.enabled,
      row.secret,
      row.createdAt,
    ],
  );
}

/**
 * The workspace's endpoint with this id, or undefined. `lock` holds its row for the rest of
 * the transaction, so that changes of one endpoint take turns.
 */
export async function endpointFind(
  q: Queryable,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<EndpointRow | undefined> {
  const rows = await q.query<EndpointRow>(
    `select ${COLUMNS}
     from webhook_endpoints
     where workspace_id = $1
       and id = $2
     ${lock ? "for update" : ""}`,
    [workspaceId, id],
  );
  return rows[0];
}

/** How many endpoints the workspace has, its rows locked while counting (one creation at a time). */
export async function endpointCountLocked(q: Queryable, workspaceId: string): Promise<number> {
  // The workspace row serialises creations: two at once cannot both see room for one more.
  await q.query("select 1 from workspaces where id = $1 for update", [workspaceId]);
  const rows = await q.query<{ n: number }>(
    "select count(*)::int as n from webhook_endpoints where workspace_id = $1",
    [workspaceId],
  );
  return rows[0]?.n ?? 0;
}

/** A page of the workspace's endpoints by id, from `cursor` on, `limit` rows. */
export function endpointList(
  q: Queryable,
  workspaceId: string,
  cursor: string | undefined,
  limit: number,
): Promise<EndpointRow[]> {
  return q.query<EndpointRow>(
    `select ${COLUMNS}
     from webhook_endpoints
     where workspace_id = $1
       and id >= $2
     order by id
     limit $3`,
    [workspaceId, cursor ?? "", limit],
  );
}

/** Writes an endpoint's changeable settings as `row` has them. */
export async function endpointUpdate(q: Queryable, row: EndpointRow): Promise<void> {
  await q.query(
    `update webhook_endpoints
     set url = $2, description = $3, event_types = $4::text[], credits_low_threshold = $5,
       enabled = $6, disabled_reason = $7, failing_since = $8, updated_at = $9
     where id = $1`,
    [
      row.id,
      row.url,
      row.description,
      row.eventTypes,
      row.creditsLowThreshold,
      row.enabled,
      row.disabledReason,
      row.failingSince,
      row.updatedAt,
    ],
  );
}

/** Replaces the secret, keeping the former one until `previousExpiresAt` (null: not at all). */
export async function endpointRotateSecret(
  q: Queryable,
  id: string,
  secret: string,
  previous: string | null,
  previousExpiresAt: number | null,
  now: number,
): Promise<void> {
  await q.query(
    `update webhook_endpoints
     set secret = $2, previous_secret = $3, previous_secret_expires_at = $4, updated_at = $5
     where id = $1`,
    [id, secret, previous, previousExpiresAt, now],
  );
}

/** Deletes an endpoint; its deliveries and their attempts go with it. */
export async function endpointDelete(q: Queryable, id: string): Promise<void> {
  await q.query("delete from webhook_endpoints where id = $1", [id]);
}

/**
 * After a successful attempt: the endpoint answers, so its failure record is cleared (a
 * no-op write is skipped).
 */
export async function endpointAnswered(q: Queryable, id: string): Promise<void> {
  await q.query(
    "update webhook_endpoints set failing_since = null where id = $1 and failing_since is not null",
    [id],
  );
}

/**
 * After a failed attempt at `now`: starts the endpoint's failure record if it has none, and
 * answers since when it has been failing (undefined for an endpoint deleted meanwhile).
 */
export async function endpointFailed(
  q: Queryable,
  id: string,
  now: number,
): Promise<{ failingSince: number; workspaceId: string; enabled: boolean } | undefined> {
  const rows = await q.query<{ failingSince: number; workspaceId: string; enabled: boolean }>(
    `update webhook_endpoints
     set failing_since = coalesce(failing_since, $2)
     where id = $1
     returning failing_since as "failingSince", workspace_id as "workspaceId", enabled`,
    [id, now],
  );
  return rows[0];
}

/** Disables an endpoint with a reason, and gives up its pending deliveries. */
export async function endpointDisable(
  q: Queryable,
  id: string,
  reason: string,
  now: number,
): Promise<void> {
  await q.query(
    `update webhook_endpoints
     set enabled = false, disabled_reason = $2, updated_at = $3
     where id = $1`,
    [id, reason, now],
  );
  await deliveriesGiveUp(q, id);
}

/** Gives up an endpoint's pending deliveries (it was disabled): marked failed. */
export async function deliveriesGiveUp(q: Queryable, endpointId: string): Promise<void> {
  await q.query(
    `update webhook_deliveries
     set status = 'failed', next_attempt_at = null
     where endpoint_id = $1
       and status = 'pending'`,
    [endpointId],
  );
}

/** The event types the workspace's enabled endpoints subscribe to, each once. */
export async function endpointSubscribedTypes(
  q: Queryable,
  workspaceId: string,
): Promise<string[]> {
  const rows = await q.query<{ type: string }>(
    `select distinct unnest(event_types) as type
     from webhook_endpoints
     where workspace_id = $1
       and enabled`,
    [workspaceId],
  );
  return rows.map((r) => r.type);
}

/** The enabled endpoints of these workspaces that subscribe to any of `types`. */
export function endpointsSubscribing(
  q: Queryable,
  workspaceIds: readonly string[],
  types: readonly string[],
): Promise<
  { id: string; workspaceId: string; eventTypes: string[]; creditsLowThreshold: number | null }[]
> {
  if (workspaceIds.length === 0) return Promise.resolve([]);
  return q.query(
    `select id, workspace_id as "workspaceId", event_types as "eventTypes",
       credits_low_threshold as "creditsLowThreshold"
     from webhook_endpoints
     where workspace_id = any($1::text[])
       and enabled
       and event_types && $2::text[]`,
    [workspaceIds, types],
  );
}

/** Whether any workspace has an enabled endpoint (the dispatcher's poll is idle otherwise). */
export async function anyEndpointEnabled(q: Queryable): Promise<boolean> {
  const rows = await q.query<{ any: boolean }>(
    "select exists (select 1 from webhook_endpoints where enabled) as any",
  );
  return rows[0]?.any === true;
}
