import { slices } from "../batches.js";
import type { Queryable } from "../db.js";

/** A rate-limit configuration of an identity (or, later, of a key). */
export interface RatelimitRow {
  id: string;
  workspaceId: string;
  identityId: string | null;
  keyId: string | null;
  name: string;
  limit: number;
  durationMs: number;
  autoApply: boolean;
}

const COLUMNS = `id, workspace_id as "workspaceId", identity_id as "identityId", key_id as "keyId",
  name, window_limit as "limit", duration_ms as "durationMs", auto_apply as "autoApply"`;

/** Inserts rate-limit configurations, in one statement (an owner has at most 50). */
export async function ratelimitInsert(
  q: Queryable,
  rows: readonly RatelimitRow[],
  now: number,
): Promise<void> {
  for (const part of slices(rows)) {
    await q.query(
      `insert into ratelimits (id, workspace_id, identity_id, key_id, name, window_limit, duration_ms,
         auto_apply, created_at)
       select id, workspace_id, identity_id, key_id, name, window_limit::int8, duration_ms::int8,
         auto_apply::bool, $1
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::text[], $9::text[])
         as t(id, workspace_id, identity_id, key_id, name, window_limit, duration_ms, auto_apply)`,
      [
        now,
        part.map((r) => r.id),
        part.map((r) => r.workspaceId),
        part.map((r) => r.identityId),
        part.map((r) => r.keyId),
        part.map((r) => r.name),
        // Numbers and booleans travel as text: the drivers would not bind their arrays typed.
        part.map((r) => String(r.limit)),
        part.map((r) => String(r.durationMs)),
        part.map((r) => String(r.autoApply)),
      ],
    );
  }
}

/** Updates the settings of existing configurations (by id). */
export async function ratelimitUpdate(
  q: Queryable,
  rows: readonly RatelimitRow[],
  now: number,
): Promise<void> {
  for (const r of rows) {
    await q.query(
      `update ratelimits
       set window_limit = $2,
           duration_ms = $3,
           auto_apply = $4,
           updated_at = $5
       where id = $1`,
      [r.id, r.limit, r.durationMs, r.autoApply, now],
    );
  }
}

/** Deletes configurations by id. */
export async function ratelimitDelete(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `delete from ratelimits
     where id = any($1::text[])`,
    [ids],
  );
}

/** The configurations of some identities, by identity and name. */
export function ratelimitsOfIdentities(
  q: Queryable,
  identityIds: readonly string[],
): Promise<RatelimitRow[]> {
  if (identityIds.length === 0) return Promise.resolve([]);
  return q.query<RatelimitRow>(
    `select ${COLUMNS}
     from ratelimits
     where identity_id = any($1::text[])
     order by identity_id, name`,
    [identityIds],
  );
}

/** The configurations of a key. */
export function ratelimitsOfKey(q: Queryable, keyId: string): Promise<RatelimitRow[]> {
  return q.query<RatelimitRow>(
    `select ${COLUMNS}
     from ratelimits
     where key_id = $1
     order by name`,
    [keyId],
  );
}
