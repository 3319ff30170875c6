import { type LedgerEntry, moves, type StatementGranularity } from "../../domain/credit-ledger.js";
import type { Queryable } from "../db.js";

/**
 * Appends ledger entries at instant `at` (Unix ms), in the caller's statement order: call it
 * in the transaction that moves the balances. Each entry's workspace is its subject's (a key's
 * or an identity's); entries that move nothing are left out, and with none nothing is sent.
 */
export async function creditLedgerAppend(
  q: Queryable,
  at: number,
  entries: readonly (LedgerEntry | undefined)[],
): Promise<void> {
  const written = entries.filter((e): e is LedgerEntry => e !== undefined && moves(e));
  if (written.length === 0) return;
  await q.query(
    `insert into credit_ledger (workspace_id, subject_id, at, spent, refilled, adjusted)
     select coalesce(k.workspace_id, i.workspace_id), e.subject, $1, e.spent, e.refilled,
       e.adjusted
     from jsonb_to_recordset($2::text::jsonb)
       as e(subject text, spent bigint, refilled bigint, adjusted bigint)
     left join keys k on k.id = e.subject
     left join identities i on i.id = e.subject
     where coalesce(k.workspace_id, i.workspace_id) is not null`,
    [
      at,
      JSON.stringify(
        written.map((e) => ({
          subject: e.subjectId,
          spent: e.spent,
          refilled: e.refilled,
          adjusted: e.adjusted,
        })),
      ),
    ],
  );
}

/** One bucket of a statement's credit columns. */
export interface LedgerBucket {
  time: number;
  spent: number;
  refilled: number;
  adjusted: number;
}

/**
 * SQL for the UTC bucket start (Unix ms) of a bigint Unix-ms column. Months are computed from
 * the UTC calendar; hours and days are fixed widths.
 */
export function bucketSql(g: StatementGranularity, column: string): string {
  if (g === "hour") return `(${column} - ${column} % 3600000)`;
  if (g === "day") return `(${column} - ${column} % 86400000)`;
  return `(extract(epoch from date_trunc('month', to_timestamp(${column} / 1000.0) at time zone 'UTC')) * 1000)::bigint`;
}

/**
 * The sums of a subject's entries with `start <= at < end`, by bucket; buckets without an
 * entry are absent (the caller fills them).
 */
export function creditLedgerBuckets(
  q: Queryable,
  workspaceId: string,
  subjectId: string,
  g: StatementGranularity,
  start: number,
  end: number,
): Promise<LedgerBucket[]> {
  return q.query<LedgerBucket>(
    `select ${bucketSql(g, "at")} as time, sum(spent)::bigint as spent,
       sum(refilled)::bigint as refilled, sum(adjusted)::bigint as adjusted
     from credit_ledger
     where subject_id = $1
       and workspace_id = $2
       and at >= $3
       and at < $4
     group by 1`,
    [subjectId, workspaceId, start, end],
  );
}

/**
 * Deletes up to `limit` entries older than `beforeMs`; answers how many went. Harmless on
 * several processes at once (an entry goes once).
 */
export async function creditLedgerDeleteBefore(
  q: Queryable,
  beforeMs: number,
  limit: number,
): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `with gone as (
       delete from credit_ledger
       where ctid = any(array(select ctid from credit_ledger where at < $1 limit $2))
       returning 1
     )
     select count(*)::int as n from gone`,
    [beforeMs, limit],
  );
  return rows[0]?.n ?? 0;
}
