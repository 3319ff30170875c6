import type { StatementGranularity } from "../../domain/credit-ledger.js";
import type { Queryable } from "../db.js";
import { bucketSql } from "./credit-ledger.js";

/** Whose verifications to count: those of one key, or of every key of one identity. */
export type CountedSubject = { keyId: string } | { identityId: string };

/** Verifications of one outcome in one bucket. */
export interface OutcomeCount {
  time: number;
  outcome: string;
  count: number;
}

/**
 * Counts the stored verification events of a key or an identity with `start <= time < end`,
 * by bucket and outcome. Events reach the store in batches (about every second), so the
 * latest verifications may not be counted yet; events past analytics retention are gone.
 */
export function verificationCountsByBucket(
  q: Queryable,
  workspaceId: string,
  subject: CountedSubject,
  g: StatementGranularity,
  start: number,
  end: number,
): Promise<OutcomeCount[]> {
  const [column, id] =
    "keyId" in subject ? ["key_id", subject.keyId] : ["identity_id", subject.identityId];
  return q.query<OutcomeCount>(
    `select ${bucketSql(g, "time")} as time, outcome, count(*)::int as count
     from key_verifications
     where workspace_id = $1
       and ${column} = $2
       and time >= $3
       and time < $4
     group by 1, 2`,
    [workspaceId, id, start, end],
  );
}
