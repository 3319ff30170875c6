import type { JsonObject } from "@bufbuild/protobuf";
import type { CreditState } from "../../domain/credits.js";
import type { Queryable } from "../db.js";

/** A configured rate limit inside a key record. */
export interface RecordRatelimit {
  id: string;
  name: string;
  limit: number;
  durationMs: number;
  autoApply: boolean;
}

/**
 * Everything a read or a verification needs about a live key, in one row: the key, its
 * effective credits (a rerolled key's come from the key it was replaced by), its live
 * identity with its rate limits, its own rate limits, its permission slugs (direct and
 * through roles) and its role names.
 */
export interface KeyRecordRow {
  id: string;
  workspaceId: string;
  apiId: string;
  start: string;
  name: string | null;
  meta: JsonObject | null;
  expiresAt: number | null;
  enabled: boolean;
  createdAt: number;
  updatedAt: number | null;
  lastUsedAt: number | null;
  /** The key holding the balance: the key itself, or the key it was rerolled into. */
  creditsKeyId: string;
  remaining: number | null;
  refillAmount: number | null;
  refillDay: number | null;
  lastRefillAt: number | null;
  identityId: string | null;
  externalId: string | null;
  identityMeta: JsonObject | null;
  /** The credit pool of the identity (null remaining: none, or no live identity). */
  identityRemaining: number | null;
  identityRefillAmount: number | null;
  identityRefillDay: number | null;
  identityLastRefillAt: number | null;
  identityRatelimits: RecordRatelimit[];
  keyRatelimits: RecordRatelimit[];
  permissions: string[];
  roles: string[];
  /** The network ranges set on the key; null when it has none. */
  allowedCidrs: string[] | null;
  /** The network ranges of its API, which apply when the key has none; null when none. */
  apiAllowedCidrs: string[] | null;
}

// One statement for a page of records or for a verification; the where clause differs.
const SELECT = `
select k.id, k.workspace_id as "workspaceId", k.api_id as "apiId", k.start, k.name, k.meta,
  k.expires_at as "expiresAt", k.enabled, k.created_at as "createdAt", k.updated_at as "updatedAt",
  k.last_used_at as "lastUsedAt", k.allowed_cidrs as "allowedCidrs",
  a.allowed_cidrs as "apiAllowedCidrs",
  coalesce(h.id, k.id) as "creditsKeyId",
  case when h.id is null then k.remaining else h.remaining end as remaining,
  case when h.id is null then k.refill_amount else h.refill_amount end as "refillAmount",
  case when h.id is null then k.refill_day else h.refill_day end as "refillDay",
  case when h.id is null then k.last_refill_at else h.last_refill_at end as "lastRefillAt",
  i.id as "identityId", i.external_id as "externalId", i.meta as "identityMeta",
  i.remaining as "identityRemaining", i.refill_amount as "identityRefillAmount",
  i.refill_day as "identityRefillDay", i.last_refill_at as "identityLastRefillAt",
  coalesce((
    select json_agg(json_build_object('id', r.id, 'name', r.name, 'limit', r.window_limit,
      'durationMs', r.duration_ms, 'autoApply', r.auto_apply) order by r.name)
    from ratelimits r
    where r.identity_id = i.id), '[]'::json) as "identityRatelimits",
  coalesce((
    select json_agg(json_build_object('id', r.id, 'name', r.name, 'limit', r.window_limit,
      'durationMs', r.duration_ms, 'autoApply', r.auto_apply) order by r.name)
    from ratelimits r
    where r.key_id = k.id), '[]'::json) as "keyRatelimits",
  coalesce((
    select json_agg(s.slug order by s.slug)
    from (
      select p.slug
      from keys_permissions kp
      join permissions p on p.id = kp.permission_id
      where kp.key_id = k.id
      union
      select p.slug
      from keys_roles kr
      join roles_permissions rp on rp.role_id = kr.role_id
      join permissions p on p.id = rp.permission_id
      where kr.key_id = k.id
    ) s), '[]'::json) as permissions,
  coalesce((
    select json_agg(ro.name order by ro.name)
    from keys_roles kr
    join roles ro on ro.id = kr.role_id
    where kr.key_id = k.id), '[]'::json) as roles
from keys k
join apis a on a.id = k.api_id and a.deleted_at is null
left join identities i on i.id = k.identity_id and i.deleted_at is null
left join keys h on h.id = k.credits_key_id`;

/** The records of live keys of the workspace with these ids, in id order. */
export async function keyRecordsByIds(
  q: Queryable,
  workspaceId: string,
  ids: readonly string[],
): Promise<KeyRecordRow[]> {
  if (ids.length === 0) return [];
  const rows = await q.query<KeyRecordRow>(
    `${SELECT}
     where k.workspace_id = $1
       and k.id = any($2::text[])
       and k.deleted_at is null
     order by k.id`,
    [workspaceId, ids],
  );
  return rows;
}

// The verification lookup also reads the hash the key is stored under.
const SELECT_WITH_HASH = SELECT.replace("select k.id,", 'select k.hash as "storedHash", k.id,');

/**
 * Where a lookup by hash may find a key: in one workspace, or in one API (of one workspace).
 * Hashes are unique per workspace only, so a lookup never goes without one of the two.
 */
export type KeyScope =
  | { workspaceId: string; apiId?: undefined }
  | { apiId: string; workspaceId?: undefined };

/**
 * The record of the live key of `scope` stored under any of these hashes (the stored forms
 * one secret may have, in order of preference), with the hash it is stored under. One indexed
 * lookup per hash (workspace and hash), in one statement; an API scope reads its workspace
 * from the API first, so an unknown API finds nothing.
 */
export async function keyRecordByHashes(
  q: Queryable,
  scope: KeyScope,
  hashes: readonly string[],
): Promise<{ record: KeyRecordRow; storedHash: string } | undefined> {
  const [where, id] =
    scope.apiId === undefined
      ? ["k.workspace_id = $2", scope.workspaceId]
      : [
          "k.workspace_id = (select s.workspace_id from apis s where s.id = $2) and k.api_id = $2",
          scope.apiId,
        ];
  const rows = await q.query<KeyRecordRow & { storedHash: string }>(
    `${SELECT_WITH_HASH}
     where ${where}
       and k.hash = any($1::text[])
       and k.deleted_at is null
     order by array_position($1::text[], k.hash)
     limit 1`,
    [hashes, id],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { storedHash, ...record } = row;
  return { record, storedHash };
}

/**
 * Stores a key's hash in another form (the same secret under the current pepper). Returns
 * its workspace and API, or undefined when the key is no longer stored under `from` (another
 * node moved it first).
 */
export async function keyRehash(
  q: Queryable,
  id: string,
  from: string,
  to: string,
): Promise<{ workspaceId: string; apiId: string } | undefined> {
  const rows = await q.query<{ workspaceId: string; apiId: string }>(
    `update keys
     set hash = $3
     where id = $1
       and hash = $2
     returning workspace_id as "workspaceId", api_id as "apiId"`,
    [id, from, to],
  );
  return rows[0];
}

/** The credit pool of a record's identity, in the terms of the credit rules. */
export function identityCredits(r: KeyRecordRow): CreditState {
  return {
    remaining: r.identityRemaining,
    refillAmount: r.identityRefillAmount,
    refillDay: r.identityRefillDay,
    lastRefillAt: r.identityLastRefillAt,
  };
}
