import type { JsonObject } from "@bufbuild/protobuf";
import type { CreditState } from "../../domain/credits.js";
import type { Queryable } from "../db.js";

/** An identity as stored, with its credit pool (`remaining` null: unlimited). */
export interface IdentityRow extends CreditState {
  id: string;
  workspaceId: string;
  externalId: string;
  meta: JsonObject | null;
  createdAt: number;
  updatedAt: number | null;
  deletedAt: number | null;
}

const COLUMNS = `id, workspace_id as "workspaceId", external_id as "externalId", meta,
  created_at as "createdAt", updated_at as "updatedAt", deleted_at as "deletedAt",
  remaining, refill_amount as "refillAmount", refill_day as "refillDay",
  last_refill_at as "lastRefillAt"`;

/** Inserts an identity; a taken externalId raises a unique violation. */
export async function identityInsert(q: Queryable, row: IdentityRow): Promise<void> {
  await q.query(
    `insert into identities (id, workspace_id, external_id, meta, created_at,
       remaining, refill_amount, refill_day, last_refill_at)
     values ($1, $2, $3, $4::text::jsonb, $5, $6, $7, $8, $9)`,
    [
      row.id,
      row.workspaceId,
      row.externalId,
      row.meta ? JSON.stringify(row.meta) : null,
      row.createdAt,
      row.remaining,
      row.refillAmount,
      row.refillDay,
      row.lastRefillAt,
    ],
  );
}

/** How a request names an identity: `identity` (id or externalId) or `externalId`. */
export interface IdentityRef {
  identity?: string | undefined;
  externalId?: string | undefined;
}

/**
 * Finds a live identity of the workspace. `identity` matches an id first, then an
 * externalId; `externalId` matches only externalIds. `lock` takes its row lock for the rest
 * of the transaction, so that changes of one identity (and its deletion) serialise: a
 * caller that waited reads the identity as the other left it, deleted ones not at all.
 */
export async function identityFind(
  q: Queryable,
  workspaceId: string,
  ref: IdentityRef,
  lock = false,
): Promise<IdentityRow | undefined> {
  const locking = lock ? "for update" : "";
  if (ref.identity !== undefined) {
    const rows = await q.query<IdentityRow>(
      `select ${COLUMNS}
       from identities
       where workspace_id = $1
         and (id = $2 or external_id = $2)
         and deleted_at is null
       order by (id = $2) desc
       limit 1
       ${locking}`,
      [workspaceId, ref.identity],
    );
    return rows[0];
  }
  const rows = await q.query<IdentityRow>(
    `select ${COLUMNS}
     from identities
     where workspace_id = $1
       and external_id = $2
       and deleted_at is null
     ${locking}`,
    [workspaceId, ref.externalId],
  );
  return rows[0];
}

/**
 * Lists live identities by id from `cursor` (inclusive); returns up to `limit` rows. With
 * `ids`, only identities among them (the ones the caller may read; null: any).
 */
export function identityList(
  q: Queryable,
  workspaceId: string,
  opts: {
    cursor: string | undefined;
    limit: number;
    search: string | undefined;
    ids: readonly string[] | null;
  },
): Promise<IdentityRow[]> {
  return q.query<IdentityRow>(
    `select ${COLUMNS}
     from identities
     where workspace_id = $1
       and deleted_at is null
       and id >= coalesce($2::text, '')
       and ($3::text is null or strpos(lower(id), $3) > 0 or strpos(lower(external_id), $3) > 0)
       and ($5::text[] is null or id = any($5::text[]))
     order by id
     limit $4`,
    [workspaceId, opts.cursor ?? null, opts.search?.toLowerCase() ?? null, opts.limit, opts.ids],
  );
}

/** Replaces the metadata of an identity (null clears it). */
export async function identitySetMeta(
  q: Queryable,
  id: string,
  meta: JsonObject | null,
  now: number,
): Promise<void> {
  await q.query(
    `update identities
     set meta = $2::text::jsonb,
         updated_at = $3
     where id = $1`,
    [id, meta ? JSON.stringify(meta) : null, now],
  );
}

/** Replaces the credit pool of an identity (remaining null: unlimited). */
export async function identitySetCredits(
  q: Queryable,
  id: string,
  credits: CreditState,
  now: number,
): Promise<void> {
  await q.query(
    `update identities
     set remaining = $2,
         refill_amount = $3,
         refill_day = $4,
         last_refill_at = $5,
         updated_at = $6
     where id = $1`,
    [id, credits.remaining, credits.refillAmount, credits.refillDay, credits.lastRefillAt, now],
  );
}

/** Marks an identity as updated (its rate limits changed). */
export async function identityTouch(q: Queryable, id: string, now: number): Promise<void> {
  await q.query(
    `update identities
     set updated_at = $2
     where id = $1`,
    [id, now],
  );
}

/** Soft-deletes a live identity; returns false when it was not live. */
export async function identitySoftDelete(q: Queryable, id: string, now: number): Promise<boolean> {
  const rows = await q.query(
    `update identities
     set deleted_at = $2
     where id = $1
       and deleted_at is null
     returning id`,
    [id, now],
  );
  return rows.length === 1;
}

/**
 * Finds an identity by externalId, deleted or not (a deleted one keeps its externalId),
 * share-locked for the rest of the transaction: a key linked to it commits before a
 * concurrent deletion of the identity, or reads it deleted.
 */
export async function identityFindAnyByExternalId(
  q: Queryable,
  workspaceId: string,
  externalId: string,
): Promise<IdentityRow | undefined> {
  const rows = await q.query<IdentityRow>(
    `select ${COLUMNS}
     from identities
     where workspace_id = $1
       and external_id = $2
     for share`,
    [workspaceId, externalId],
  );
  return rows[0];
}

/** Which of these externalIds an identity of the workspace holds, deleted or not. */
export async function identityExternalIdsTaken(
  q: Queryable,
  workspaceId: string,
  externalIds: readonly string[],
): Promise<string[]> {
  if (externalIds.length === 0) return [];
  const rows = await q.query<{ externalId: string }>(
    `select external_id as "externalId"
     from identities
     where workspace_id = $1
       and external_id = any($2::text[])`,
    [workspaceId, externalIds],
  );
  return rows.map((r) => r.externalId);
}

/** Inserts an identity unless its externalId is taken; returns whether it was inserted. */
export async function identityInsertIfAbsent(q: Queryable, row: IdentityRow): Promise<boolean> {
  const rows = await q.query(
    `insert into identities (id, workspace_id, external_id, meta, created_at)
     values ($1, $2, $3, $4::text::jsonb, $5)
     on conflict (workspace_id, external_id) do nothing
     returning id`,
    [
      row.id,
      row.workspaceId,
      row.externalId,
      row.meta ? JSON.stringify(row.meta) : null,
      row.createdAt,
    ],
  );
  return rows.length === 1;
}
