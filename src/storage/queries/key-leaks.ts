import type { LeakPolicy } from "../../domain/leaks.js";
import type { Queryable } from "../db.js";

/** A key found by the hash of a reported secret, in whichever workspace holds it. */
export interface LeakedKeyRow {
  id: string;
  workspaceId: string;
  apiId: string;
  hash: string;
  /** Neither the key nor its API is deleted: the key could still verify. */
  live: boolean;
  /** The policy of the key's API. */
  leakPolicy: LeakPolicy;
}

/**
 * Every key, in any workspace, stored under one of `hashes` (deleted ones too, so that a
 * report of a revoked key is still recognised), at most `limit` of them. A secret-scanning
 * report names a secret, not a tenant: this is the one lookup by hash that is not scoped,
 * and what it finds is never shown to the caller (see the receiver).
 */
export function keysByHashesAnywhere(
  q: Queryable,
  hashes: readonly string[],
  limit: number,
): Promise<LeakedKeyRow[]> {
  if (hashes.length === 0) return Promise.resolve([]);
  return q.query<LeakedKeyRow>(
    `select k.id, k.workspace_id as "workspaceId", k.api_id as "apiId", k.hash,
       (k.deleted_at is null and a.deleted_at is null) as live,
       a.leak_policy as "leakPolicy"
     from keys k
     join apis a on a.id = k.api_id
     where k.hash = any($1::text[])
     order by k.id
     limit $2`,
    [hashes, limit],
  );
}

/** A leak of a key reported at one place, as stored. */
export interface KeyLeakRow {
  keyId: string;
  /** SHA-256 of the place (source and URL), which identifies a repeated report. */
  digest: string;
  workspaceId: string;
  apiId: string;
  source: string;
  url: string;
  policy: LeakPolicy;
  reportedAt: number;
}

/** Records a leak; false (nothing written) when this key's leak at this place is known already. */
export async function keyLeakInsert(q: Queryable, leak: KeyLeakRow): Promise<boolean> {
  const rows = await q.query(
    `insert into key_leaks (key_id, digest, workspace_id, api_id, source, url, policy, reported_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict (key_id, digest) do nothing
     returning key_id`,
    [
      leak.keyId,
      leak.digest,
      leak.workspaceId,
      leak.apiId,
      leak.source,
      leak.url,
      leak.policy,
      leak.reportedAt,
    ],
  );
  return rows.length === 1;
}

/** Turns a live key off (`enabled` false); false when it was not live or is off already. */
export async function keyDisable(q: Queryable, id: string, now: number): Promise<boolean> {
  const rows = await q.query(
    `update keys
     set enabled = false,
         updated_at = $2
     where id = $1
       and deleted_at is null
       and enabled
     returning id`,
    [id, now],
  );
  return rows.length === 1;
}
