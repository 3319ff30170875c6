import type { Queryable } from "../db.js";

/** What one coalesced spend found and did. */
export interface BatchSpend {
  /** False when the key row is gone (deleted for good). */
  found: boolean;
  /** True for a key without a credit limit (nothing is spent). */
  unlimited: boolean;
  /** The balance before the batch, with a due refill applied. */
  before: number;
  /** Credits taken: the longest prefix of the costs, in order, that the balance covers. */
  taken: number;
}

/**
 * Spends a batch of costs from one key's balance in ONE statement. The row is locked and
 * read at its latest committed version (FOR UPDATE re-reads a row changed concurrently),
 * a due refill is applied (the boundary of the key's own refill_day is picked from
 * `$3`, see refillBoundaries), and the costs are taken in order while the balance covers
 * their running sum. The update commits with the statement, before anyone is answered.
 */
export async function creditsSpendBatch(
  q: Queryable,
  keyId: string,
  costs: readonly number[],
  boundaries: readonly number[],
): Promise<BatchSpend> {
  const rows = await q.query<{ unlimited: boolean; before: number | null; taken: number }>(
    `with locked as (
       select id, remaining, refill_amount, last_refill_at,
         ($3::bigint[])[coalesce(refill_day, 0) + 1] as boundary
       from keys
       where id = $1
       for update
     ),
     due as (
       select id, remaining, boundary,
         refill_amount is not null and remaining is not null
           and coalesce(last_refill_at, -1) < boundary as refill,
         refill_amount
       from locked
     ),
     state as (
       select id, remaining is null as unlimited, refill, boundary,
         case when refill then greatest(remaining, refill_amount) else remaining end as before
       from due
     ),
     costs as (
       select sum(c) over (order by o) as cum
       from unnest($2::bigint[]) with ordinality as t(c, o)
     ),
     plan as (
       select id, unlimited, refill, boundary, before,
         case when unlimited then 0
           else coalesce((select max(cum) from costs where cum <= state.before), 0)
         end as taken
       from state
     ),
     spent as (
       update keys k
       set remaining = plan.before - plan.taken,
           last_refill_at = case when plan.refill then plan.boundary else k.last_refill_at end
       from plan
       where k.id = plan.id
         and not plan.unlimited
         and (plan.taken > 0 or plan.refill)
       returning k.id
     )
     select unlimited, before, taken::bigint as taken
     from plan`,
    [keyId, costs, boundaries],
  );
  const row = rows[0];
  if (!row) return { found: false, unlimited: false, before: 0, taken: 0 };
  return {
    found: true,
    unlimited: row.unlimited,
    before: row.before ?? 0,
    taken: Number(row.taken),
  };
}
