import type { Queryable } from "../db.js";

/** A request's idempotency key and where and when it is claimed. */
export interface IdempotencyClaim {
  workspaceId: string;
  key: string;
  /** SHA-256 (hex) of what the request asks, without the key itself. */
  requestHash: string;
  /** Unix ms of the claim. */
  now: number;
  /** Records created at or before this instant (Unix ms) count as absent. */
  expiredAt: number;
}

/** A record that was there when a claim was tried: what the first request was and answered. */
export interface IdempotencyPrior {
  requestHash: string;
  /** The first request's answer (protobuf JSON), null only before that request committed. */
  answer: string | null;
}

/**
 * Claims an idempotency key inside the caller's transaction: undefined when this transaction
 * now holds it (a new record, or an expired one taken over), else the live record. On
 * PostgreSQL a second claimer of the same key waits on the primary key until the first
 * transaction ends: if it committed, the conflict hands over its record; if it rolled back,
 * the insert goes through and the second claimer runs the request itself. The conflict's
 * update applies only to an expired record, but locks a live one too, so repeats of one key
 * read its record one after the other (they are short).
 */
export async function idempotencyClaim(
  tx: Queryable,
  c: IdempotencyClaim,
): Promise<IdempotencyPrior | undefined> {
  const { expiredAt, ...claim } = c;
  const won = await idempotencyClaimBatch(tx, [claim], expiredAt);
  if (won.size > 0) return undefined;
  // Not taken over, so the record is live.
  const prior = await idempotencyRead(tx, c.workspaceId, c.key, expiredAt);
  if (!prior) throw new Error("an idempotency record that conflicted is missing");
  return prior;
}

/** Stores the answer of the request that claimed the key, before its transaction commits. */
export async function idempotencyStore(
  tx: Queryable,
  workspaceId: string,
  key: string,
  answer: string,
): Promise<void> {
  await tx.query(
    `update idempotency_records
     set answer = $3
     where workspace_id = $1
       and idempotency_key = $2`,
    [workspaceId, key, answer],
  );
}

/**
 * Deletes at most `limit` records created at or before `expiredAt`, oldest first (through the
 * created_at index), and says how many went: one bounded statement, so a pass never holds
 * locks on, or scans, an unbounded number of rows.
 */
export async function idempotencyDeleteExpired(
  q: Queryable,
  expiredAt: number,
  limit: number,
): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `with old as (
       select workspace_id, idempotency_key
       from idempotency_records
       where created_at <= $1
       order by created_at
       limit $2
     ),
     gone as (
       delete from idempotency_records r
       using old
       where r.workspace_id = old.workspace_id
         and r.idempotency_key = old.idempotency_key
       returning 1
     )
     select count(*)::int as n from gone`,
    [expiredAt, limit],
  );
  return rows[0]?.n ?? 0;
}

/**
 * The live record of a key. Read without a transaction or a lock, a stored answer can be
 * replayed at once, and a record without one belongs to a call still in flight.
 */
export async function idempotencyRead(
  q: Queryable,
  workspaceId: string,
  key: string,
  expiredAt: number,
): Promise<IdempotencyPrior | undefined> {
  const rows = await q.query<IdempotencyPrior>(
    `select request_hash as "requestHash", answer
     from idempotency_records
     where workspace_id = $1
       and idempotency_key = $2
       and created_at > $3`,
    [workspaceId, key, expiredAt],
  );
  return rows[0];
}

/** One key of a batch claim, with its claim instant (Unix ms). */
export interface BatchClaim {
  workspaceId: string;
  key: string;
  requestHash: string;
  now: number;
}

/**
 * Claims several keys (distinct) in one statement inside the caller's transaction, the way
 * `idempotencyClaim` claims one, and says which this transaction now holds (by the index of
 * `claims`). The rows are inserted in key order, so two batches racing for overlapping keys
 * (on two nodes) wait on them in the same order and never deadlock. A key claimed by a
 * transaction in flight waits for it: held if that one rolls back, not if it commits.
 */
export async function idempotencyClaimBatch(
  tx: Queryable,
  claims: readonly BatchClaim[],
  expiredAt: number,
): Promise<Set<number>> {
  const rows = await tx.query<{ workspaceId: string; key: string }>(
    `insert into idempotency_records as r
       (workspace_id, idempotency_key, request_hash, answer, created_at)
     select c.w, c.k, c.h, null, c.t
     from unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) as c(w, k, h, t)
     order by c.w, c.k
     on conflict (workspace_id, idempotency_key) do update
       set request_hash = excluded.request_hash, answer = null, created_at = excluded.created_at
       where r.created_at <= $5
     returning workspace_id as "workspaceId", idempotency_key as "key"`,
    [
      claims.map((c) => c.workspaceId),
      claims.map((c) => c.key),
      claims.map((c) => c.requestHash),
      claims.map((c) => c.now),
      expiredAt,
    ],
  );
  const held = new Set(rows.map(claimId));
  const won = new Set<number>();
  claims.forEach((c, i) => {
    if (held.has(claimId(c))) won.add(i);
  });
  return won;
}

/** One string per idempotency key of a workspace. */
export function claimId(c: { workspaceId: string; key: string }): string {
  return `${c.workspaceId}\u0000${c.key}`;
}

/** Stores the answers of keys this transaction claimed, in one statement. */
export async function idempotencyStoreBatch(
  tx: Queryable,
  answers: readonly { workspaceId: string; key: string; answer: string }[],
): Promise<void> {
  if (answers.length === 0) return;
  await tx.query(
    `update idempotency_records r
     set answer = a.answer
     from unnest($1::text[], $2::text[], $3::text[]) as a(w, k, answer)
     where r.workspace_id = a.w
       and r.idempotency_key = a.k`,
    [answers.map((a) => a.workspaceId), answers.map((a) => a.key), answers.map((a) => a.answer)],
  );
}
