import type { Queryable } from "../db.js";

/** The background passes that keep a cursor. */
export type CursorName = "key.expired" | "credits";

/**
 * Takes a pass's cursor row for the rest of the transaction, `for update skip locked`:
 * answers its position (null before the first pass), or undefined when another process
 * holds it (that process runs the pass now).
 */
export async function cursorTake(
  q: Queryable,
  name: CursorName,
): Promise<{ position: string | null } | undefined> {
  const take = () =>
    q.query<{ position: string | null }>(
      "select position from webhook_cursors where name = $1 for update skip locked",
      [name],
    );
  const rows = await take();
  if (rows[0]) return rows[0];
  // No row: never made (the migration makes both), or removed by hand. A row held by
  // another process is skipped by the select, and this insert then does nothing.
  const made = await q.query<{ position: string | null }>(
    `insert into webhook_cursors (name, position) values ($1, null)
     on conflict (name) do nothing
     returning position`,
    [name],
  );
  return made[0];
}

/** Moves a cursor (in the transaction that took it). */
export async function cursorMove(q: Queryable, name: CursorName, position: string): Promise<void> {
  await q.query("update webhook_cursors set position = $2 where name = $1", [name, position]);
}

/** A key whose expiry the expiry pass read. */
export interface ExpiredKeyRow {
  id: string;
  workspaceId: string;
  apiId: string;
  expiresAt: number;
}

/**
 * Up to `limit` keys (not deleted) whose expiry is after the cursor (`afterMs`, and `afterId`
 * at that instant; null: nothing of that instant read yet) and at or before `now`, in expiry
 * order.
 */
export function keysExpiredAfter(
  q: Queryable,
  afterMs: number,
  afterId: string | null,
  now: number,
  limit: number,
): Promise<ExpiredKeyRow[]> {
  return q.query<ExpiredKeyRow>(
    `select id, workspace_id as "workspaceId", api_id as "apiId", expires_at as "expiresAt"
     from keys
     where expires_at is not null
       and (expires_at > $1 or (expires_at = $1 and $2::text is not null and id > $2::text))
       and expires_at <= $3
       and deleted_at is null
     order by expires_at, id
     limit $4`,
    [afterMs, afterId, now, limit],
  );
}

/** A ledger entry the credit events pass read, in commit order. */
export interface LedgerRow {
  workspaceId: string;
  subjectId: string;
  tx: string;
  seq: number;
  spent: number;
  refilled: number;
  adjusted: number;
}

/**
 * Up to `limit` ledger entries after the cursor (`tx`, `seq`) in commit order, of
 * transactions older than every one still running: those have all ended, so nothing can
 * commit later before an entry read here.
 */
export function ledgerAfter(
  q: Queryable,
  tx: string,
  seq: number,
  limit: number,
): Promise<LedgerRow[]> {
  return q.query<LedgerRow>(
    // Ordered by the columns (l.tx), not by the text the answer carries: "10" < "9" as text.
    `select l.workspace_id as "workspaceId", l.subject_id as "subjectId", l.tx::text as tx, l.seq,
       l.spent, l.refilled, l.adjusted
     from credit_ledger l
     where l.tx is not null
       and (l.tx, l.seq) > ($1::xid8, $2::int8)
       and l.tx < pg_snapshot_xmin(pg_current_snapshot())
     order by l.tx, l.seq
     limit $3`,
    [tx, seq, limit],
  );
}

/**
 * Whether the ledger may hold entries after (tx, seq): any entry after it, committed or not
 * (a cheap look before the pass takes its cursor; the pass itself reads only what is safe).
 */
export async function ledgerHasAfter(q: Queryable, tx: string, seq: number): Promise<boolean> {
  const rows = await q.query<{ any: boolean }>(
    `select exists (
       select 1 from credit_ledger l
       where l.tx is not null and (l.tx, l.seq) > ($1::xid8, $2::int8)
     ) as any`,
    [tx, seq],
  );
  return rows[0]?.any === true;
}

/** Where the credit pass starts on a database that never ran it: the present. */
export async function ledgerStart(q: Queryable): Promise<string> {
  const rows = await q.query<{ tx: string }>(
    "select pg_snapshot_xmin(pg_current_snapshot())::text as tx",
  );
  return (rows[0] as { tx: string }).tx;
}

/** A balance's current value and what the entries after a point moved it by since. */
export interface BalanceNow {
  subjectId: string;
  /** The key's API, for a key's balance; null for an identity's pool. */
  apiId: string | null;
  isKey: boolean;
  /** The stored balance; null when unlimited. */
  remaining: number | null;
  /** The net move of the entries after (`tx`, `seq`). */
  movedAfter: number;
}

/**
 * The stored balance of each subject (a key or an identity) with the net move of its ledger
 * entries after (`tx`, `seq`): the balance right after the entry at that point is
 * `remaining - movedAfter`. Read in one snapshot, the two agree: every move and its entry
 * commit together. The entries after the point are read through the commit-order index,
 * from the point on: in the steady state the few committed since the pass's batch.
 */
export function balancesAfter(
  q: Queryable,
  subjects: readonly string[],
  tx: string,
  seq: number,
): Promise<BalanceNow[]> {
  return q.query<BalanceNow>(
    `with moved as (
       select subject_id, sum(refilled + adjusted - spent)::int8 as n
       from credit_ledger
       where tx is not null
         and (tx, seq) > ($2::xid8, $3::int8)
         and subject_id = any($1::text[])
       group by subject_id
     )
     select s.id as "subjectId", k.api_id as "apiId", (k.id is not null) as "isKey",
       coalesce(k.remaining, i.remaining) as remaining, coalesce(m.n, 0)::int8 as "movedAfter"
     from unnest($1::text[]) as s(id)
     left join keys k on k.id = s.id
     left join identities i on i.id = s.id
     left join moved m on m.subject_id = s.id`,
    [subjects, tx, seq],
  );
}
