import { type Range, type StatementGranularity, splitRange } from "../../domain/credit-ledger.js";
import type { Queryable } from "../db.js";
import { bucketSql } from "./credit-ledger.js";
import { rollupTable } from "./rollups.js";

/** Whose verifications to count: those of one key, or of every key of one identity. */
export type CountedSubject = { keyId: string } | { identityId: string };

/** Verifications of one outcome in one bucket. */
export interface OutcomeCount {
  time: number;
  outcome: string;
  count: number;
}

/** The column naming whose verification an event or a rollup row is (fixed, never input). */
type Column = "key_id" | "identity_id";

/**
 * Counts the verifications of a key or an identity with `start <= time < end`, by bucket and
 * outcome: the buckets the range covers whole from the rollup of that granularity (one row
 * per group and bucket, not one per verification), the parts of the first and last buckets
 * from the raw events. Events reach the store in batches (about every second), so the latest
 * verifications may not be counted yet; events past analytics retention are gone.
 */
export async function verificationCountsByBucket(
  q: Queryable,
  workspaceId: string,
  subject: CountedSubject,
  g: StatementGranularity,
  start: number,
  end: number,
): Promise<OutcomeCount[]> {
  const [column, id]: [Column, string] =
    "keyId" in subject ? ["key_id", subject.keyId] : ["identity_id", subject.identityId];
  const { whole, partial } = splitRange(g, start, end);
  const reads = partial.map((range) => rawCounts(q, workspaceId, column, id, g, range));
  if (whole) reads.push(rolledUpCounts(q, workspaceId, column, id, g, whole));
  return (await Promise.all(reads)).flat();
}

/** Counts from the raw events of part of a bucket or two. */
function rawCounts(
  q: Queryable,
  workspaceId: string,
  column: Column,
  id: string,
  g: StatementGranularity,
  [from, to]: Range,
): Promise<OutcomeCount[]> {
  return q.query<OutcomeCount>(
    `select ${bucketSql(g, "time")} as time, outcome, count(*)::int as count
     from key_verifications
     where workspace_id = $1
       and ${column} = $2
       and time >= $3
       and time < $4
     group by 1, 2`,
    [workspaceId, id, from, to],
  );
}

/** Counts from the rollup of whole buckets (bucket-aligned range). */
function rolledUpCounts(
  q: Queryable,
  workspaceId: string,
  column: Column,
  id: string,
  g: StatementGranularity,
  [from, to]: Range,
): Promise<OutcomeCount[]> {
  return q.query<OutcomeCount>(
    `select (extract(epoch from time) * 1000)::bigint as time, outcome,
       sum(count)::bigint as count
     from ${rollupTable(g)}
     where workspace_id = $1
       and ${column} = $2
       and time >= to_timestamp($3 / 1000.0)
       and time < to_timestamp($4 / 1000.0)
     group by 1, 2`,
    [workspaceId, id, from, to],
  );
}
