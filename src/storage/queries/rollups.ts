import type { RollupRow } from "../../domain/analytics/rollups.js";
import type { Granularity } from "../../domain/analytics/tables.js";
import type { Queryable } from "../db.js";

const TABLES: Record<Granularity, string> = {
  minute: "verifications_per_minute",
  hour: "verifications_per_hour",
  day: "verifications_per_day",
  month: "verifications_per_month",
};

/** The physical rollup table of a granularity. */
export function rollupTable(granularity: Granularity): string {
  return TABLES[granularity];
}

/**
 * Adds a batch's groups to a rollup: new groups are inserted, existing ones get the counts
 * added. Run it in the transaction that inserts the raw events, so both or neither count.
 * A group is told apart by a digest of its (sorted) tags, which the database computes
 * (`tags_digest`, a generated column): the tags themselves are too large for an index.
 * The rows arrive sorted by group (Rollup.rows) and a function scan keeps their order, so
 * concurrent writers take the row locks in one order.
 */
export async function rollupAdd(
  q: Queryable,
  granularity: Granularity,
  rows: readonly RollupRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `insert into ${TABLES[granularity]} as r (time, workspace_id, api_id, key_id, identity_id,
       external_id, outcome, tags, count, spent_credits)
     select to_timestamp(e.time / 1000.0), e."workspaceId", e."apiId", e."keyId", e."identityId",
       e."externalId", e.outcome, e.tags, e.count, e."spentCredits"
     from jsonb_to_recordset($1::text::jsonb) as e(time bigint, "workspaceId" text,
       "apiId" text, "keyId" text, "identityId" text, "externalId" text, outcome text,
       tags text[], count bigint, "spentCredits" bigint)
     on conflict (workspace_id, time, api_id, key_id, identity_id, outcome, tags_digest)
     do update set count = r.count + excluded.count,
       -- Saturates instead of failing: costs reach 10^12, and a bigint overflow would make
       -- the database refuse this batch every time.
       spent_credits = least(r.spent_credits::numeric + excluded.spent_credits,
         9223372036854775807)::bigint`,
    [JSON.stringify(rows)],
  );
}
