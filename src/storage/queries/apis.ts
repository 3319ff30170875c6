import type { KeyFormat } from "../../domain/key-format.js";
import type { LeakPolicy } from "../../domain/leaks.js";
import type { Queryable } from "../db.js";

/** An API as stored. */
export interface ApiRow {
  id: string;
  workspaceId: string;
  name: string;
  /** How its new keys are written. */
  keyFormat: KeyFormat;
  /** What a reported leak of one of its keys does. */
  leakPolicy: LeakPolicy;
  createdAt: number;
  /** The network ranges the API's keys verify from by default; null (or absent) for none. */
  allowedCidrs?: string[] | null;
}

const COLUMNS = `id, workspace_id as "workspaceId", name, key_format as "keyFormat",
  leak_policy as "leakPolicy", created_at as "createdAt", allowed_cidrs as "allowedCidrs"`;

/** Inserts an API. */
export async function apiInsert(q: Queryable, api: ApiRow): Promise<void> {
  await q.query(
    `insert into apis (id, workspace_id, name, key_format, leak_policy, created_at, allowed_cidrs)
     values ($1, $2, $3, $4, $5, $6, $7::text[])`,
    [
      api.id,
      api.workspaceId,
      api.name,
      api.keyFormat,
      api.leakPolicy,
      api.createdAt,
      api.allowedCidrs ?? null,
    ],
  );
}

/**
 * Finds a live API of a workspace. Another workspace's API is indistinguishable from none.
 * `lock` share-locks it for the rest of the transaction: a deletion waits for the
 * transaction to commit, and a lookup that waited on a deletion finds nothing.
 */
export async function apiFindById(
  q: Queryable,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<ApiRow | undefined> {
  const rows = await q.query<ApiRow>(
    `select ${COLUMNS}
     from apis
     where workspace_id = $1
       and id = $2
       and deleted_at is null
     ${lock ? "for share" : ""}`,
    [workspaceId, id],
  );
  return rows[0];
}

/** Soft-deletes a live API; returns false when there was none to delete. */
export async function apiSoftDelete(
  q: Queryable,
  workspaceId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const rows = await q.query(
    `update apis
     set deleted_at = $3
     where workspace_id = $1
       and id = $2
       and deleted_at is null
     returning id`,
    [workspaceId, id, now],
  );
  return rows.length === 1;
}

/**
 * A page of the live APIs of a workspace, by id from `cursor` on (at most `limit`), only
 * those in `ids` when it is not null: a narrow root key's page is filtered here, so it stays
 * full while more rows exist and its cursor stays right.
 */
export function apiList(
  q: Queryable,
  workspaceId: string,
  opts: { cursor: string | undefined; limit: number; ids: readonly string[] | null },
): Promise<ApiRow[]> {
  return q.query<ApiRow>(
    `select ${COLUMNS}
     from apis
     where workspace_id = $1
       and deleted_at is null
       and id >= coalesce($2::text, '')
       and ($4::text[] is null or id = any($4::text[]))
     order by id
     limit $3`,
    [workspaceId, opts.cursor ?? null, opts.limit, opts.ids],
  );
}

/** The settings an update changes: a setting left out is kept. */
export interface ApiChanges {
  name?: string;
  keyFormat?: KeyFormat;
  leakPolicy?: LeakPolicy;
  /** New network ranges; null removes them (there is no empty list). */
  allowedCidrs?: string[] | null;
}

/**
 * Changes the settings of a live API in one statement, so that a concurrent update or
 * deletion is serialised on the row and a deleted API is never changed. Answers the API as
 * it is after the change, or undefined when there was no live API to change.
 */
export async function apiUpdate(
  q: Queryable,
  workspaceId: string,
  id: string,
  changes: ApiChanges,
  now: number,
): Promise<ApiRow | undefined> {
  const rows = await q.query<ApiRow>(
    `update apis
     set name = coalesce($3, name),
         key_format = coalesce($4, key_format),
         leak_policy = coalesce($5, leak_policy),
         allowed_cidrs = case when $6::boolean then $7::text[] else allowed_cidrs end,
         updated_at = $8
     where workspace_id = $1
       and id = $2
       and deleted_at is null
     returning ${COLUMNS}`,
    [
      workspaceId,
      id,
      changes.name ?? null,
      changes.keyFormat ?? null,
      changes.leakPolicy ?? null,
      changes.allowedCidrs !== undefined,
      changes.allowedCidrs ?? null,
      now,
    ],
  );
  return rows[0];
}
