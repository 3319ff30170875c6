import type { Queryable } from "../db.js";
import { findByIdOrName } from "./by-id-or-name.js";

/** A rate-limit namespace as stored. */
export interface NamespaceRow {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
  deletedAt: number | null;
}

/** A rate-limit override as stored. */
export interface OverrideRow {
  id: string;
  namespaceId: string;
  identifier: string;
  limit: number;
  durationMs: number;
  createdAt: number;
}

const NS_COLUMNS = `id, workspace_id as "workspaceId", name, created_at as "createdAt", deleted_at as "deletedAt"`;
const OV_COLUMNS = `id, namespace_id as "namespaceId", identifier, window_limit as "limit",
  duration_ms as "durationMs", created_at as "createdAt"`;

/** Finds a namespace of the workspace by id, else by name (deleted ones too: the caller decides). */
export function namespaceFind(
  q: Queryable,
  workspaceId: string,
  idOrName: string,
): Promise<NamespaceRow | undefined> {
  return findByIdOrName<NamespaceRow>(q, "ratelimit_namespaces", NS_COLUMNS, workspaceId, idOrName);
}

/** Creates a namespace unless the name is taken; returns whether this call created it. */
export async function namespaceInsertIfAbsent(q: Queryable, ns: NamespaceRow): Promise<boolean> {
  const rows = await q.query(
    `insert into ratelimit_namespaces (id, workspace_id, name, created_at)
     values ($1, $2, $3, $4)
     on conflict (workspace_id, name) do nothing
     returning id`,
    [ns.id, ns.workspaceId, ns.name, ns.createdAt],
  );
  return rows.length === 1;
}

/** The live overrides of a namespace, oldest first. */
export function overridesOfNamespace(q: Queryable, namespaceId: string): Promise<OverrideRow[]> {
  return q.query<OverrideRow>(
    `select ${OV_COLUMNS}
     from ratelimit_overrides
     where namespace_id = $1
       and deleted_at is null
     order by created_at, id`,
    [namespaceId],
  );
}

/**
 * Creates or replaces the override of an identifier; a deleted one is revived with its id.
 * Returns the override's id and whether it existed (live) before.
 */
export async function overrideUpsert(
  q: Queryable,
  o: OverrideRow & { workspaceId: string },
  now: number,
): Promise<{ id: string; created: boolean }> {
  const rows = await q.query<{ id: string; created: boolean }>(
    `insert into ratelimit_overrides (id, workspace_id, namespace_id, identifier, window_limit,
       duration_ms, created_at)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (namespace_id, identifier) do update
       set window_limit = excluded.window_limit,
           duration_ms = excluded.duration_ms,
           updated_at = $7,
           created_at = case when ratelimit_overrides.deleted_at is null
             then ratelimit_overrides.created_at else $7 end,
           deleted_at = null
     returning id, (xmax = 0) as created`,
    [o.id, o.workspaceId, o.namespaceId, o.identifier, o.limit, o.durationMs, now],
  );
  return rows[0] as { id: string; created: boolean };
}

/** Soft-deletes the live override with exactly this identifier; returns its id, if any. */
export async function overrideDelete(
  q: Queryable,
  namespaceId: string,
  identifier: string,
  now: number,
): Promise<string | undefined> {
  const rows = await q.query<{ id: string }>(
    `update ratelimit_overrides
     set deleted_at = $3
     where namespace_id = $1
       and identifier = $2
       and deleted_at is null
     returning id`,
    [namespaceId, identifier, now],
  );
  return rows[0]?.id;
}

/** One page of a namespace's live overrides by id from `cursor` (inclusive). */
export function overrideList(
  q: Queryable,
  namespaceId: string,
  opts: { cursor: string | undefined; limit: number },
): Promise<OverrideRow[]> {
  return q.query<OverrideRow>(
    `select ${OV_COLUMNS}
     from ratelimit_overrides
     where namespace_id = $1
       and deleted_at is null
       and id >= coalesce($2::text, '')
     order by id
     limit $3`,
    [namespaceId, opts.cursor ?? null, opts.limit],
  );
}
