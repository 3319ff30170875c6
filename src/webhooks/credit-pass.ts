import {
  type BalanceMove,
  crossesBelow,
  exhausts,
  refills,
} from "../domain/webhooks/credit-transitions.js";
import { type CreditsSubject, deliveryBody, type WebhookEvent } from "../domain/webhooks/events.js";
import type { Db, Queryable } from "../storage/db.js";
import {
  balancesAfter,
  cursorMove,
  cursorTake,
  type LedgerRow,
  ledgerAfter,
  ledgerHasAfter,
  ledgerStart,
} from "../storage/queries/webhook-cursors.js";
import { type DirectDelivery, deliveryInsert } from "../storage/queries/webhook-deliveries.js";
import { endpointsSubscribing } from "../storage/queries/webhook-endpoints.js";

/** Ledger entries one transaction of the pass reads at most. */
export const CREDIT_BATCH = 1_000;
/** Transactions one pass runs at most. */
const BATCHES_PER_PASS = 20;
const CREDIT_TYPES = ["credits.low", "credits.exhausted", "credits.refilled"];

type Endpoint = Awaited<ReturnType<typeof endpointsSubscribing>>[number];

/** Each entry with the balance right after it, for the subjects whose balance is limited. */
async function movesOf(
  tx: Queryable,
  rows: readonly LedgerRow[],
): Promise<{ row: LedgerRow; move: BalanceMove; subject: CreditsSubject }[]> {
  const last = rows.at(-1) as LedgerRow;
  const balances = await balancesAfter(
    tx,
    [...new Set(rows.map((r) => r.subjectId))],
    last.tx,
    last.seq,
  );
  const after = new Map<string, number>();
  const subjects = new Map<string, CreditsSubject>();
  for (const b of balances) {
    if (b.remaining === null) continue;
    after.set(b.subjectId, b.remaining - b.movedAfter);
    subjects.set(
      b.subjectId,
      b.isKey ? { keyId: b.subjectId, apiId: b.apiId as string } : { identityId: b.subjectId },
    );
  }
  const out = [];
  // From the last entry back: each entry's balance after it is the next one's before.
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i] as LedgerRow;
    const balance = after.get(row.subjectId);
    const subject = subjects.get(row.subjectId);
    if (balance === undefined || subject === undefined) continue;
    const move = {
      after: balance,
      spent: row.spent,
      refilled: row.refilled,
      adjusted: row.adjusted,
    };
    after.set(row.subjectId, balance - row.refilled - row.adjusted + row.spent);
    out.push({ row, move, subject });
  }
  return out.reverse();
}

/** The events one move sends to one endpoint. */
function eventsFor(e: Endpoint, move: BalanceMove, subject: CreditsSubject): WebhookEvent[] {
  const out: WebhookEvent[] = [];
  const wants = (t: string) => e.eventTypes.includes(t);
  if (wants("credits.refilled") && refills(move))
    out.push({
      type: "credits.refilled",
      data: { ...subject, refilled: move.refilled, remaining: move.after },
    });
  const threshold = e.creditsLowThreshold;
  if (wants("credits.low") && threshold !== null && crossesBelow(move, threshold))
    out.push({ type: "credits.low", data: { ...subject, remaining: move.after, threshold } });
  if (wants("credits.exhausted") && exhausts(move))
    out.push({ type: "credits.exhausted", data: { ...subject, remaining: 0 } });
  return out;
}

/**
 * One batch: ledger entries after the cursor, in commit order, turned into credit events for
 * the endpoints that subscribe, and the cursor moved past them, in one transaction. The
 * balance before and after each entry is found from the stored balance less the entries
 * after it, so the spend path writes nothing more than its ledger entry. The cursor row is
 * taken `for update skip locked`: one process at a time, each entry read once.
 */
async function creditBatch(
  db: Db,
  now: number,
  seen: (position: string) => void,
): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    const cursor = await cursorTake(tx, "credits");
    if (!cursor) return undefined;
    if (cursor.position === null) {
      const start = `${await ledgerStart(tx)}:0`;
      await cursorMove(tx, "credits", start);
      seen(start);
      return 0;
    }
    const [at, seq] = cursor.position.split(":") as [string, string];
    const rows = await ledgerAfter(tx, at, Number(seq), CREDIT_BATCH);
    if (rows.length === 0) {
      seen(cursor.position);
      return 0;
    }
    const workspaces = [...new Set(rows.map((r) => r.workspaceId))];
    const endpoints = await endpointsSubscribing(tx, workspaces, CREDIT_TYPES);
    if (endpoints.length > 0) {
      const relevant = rows.filter((r) => endpoints.some((e) => e.workspaceId === r.workspaceId));
      const deliveries: DirectDelivery[] = [];
      if (relevant.length > 0) {
        for (const { row, move, subject } of await movesOf(tx, relevant)) {
          for (const e of endpoints) {
            if (e.workspaceId !== row.workspaceId) continue;
            for (const ev of eventsFor(e, move, subject))
              deliveries.push({
                endpointId: e.id,
                workspaceId: e.workspaceId,
                type: ev.type,
                body: deliveryBody(ev, now),
              });
          }
        }
      }
      await deliveryInsert(tx, deliveries, now);
    }
    const last = rows.at(-1) as LedgerRow;
    const position = `${last.tx}:${last.seq}`;
    await cursorMove(tx, "credits", position);
    seen(position);
    return rows.length;
  });
}

/**
 * The credit pass of one process. It remembers where it last saw the cursor, so that a pass
 * with no new ledger entry costs one read and no transaction: taking the cursor row for
 * update writes to it, and on the embedded engine a write every second was most of an idle
 * server's CPU. Another process moving the cursor past that position only makes the next
 * pass take the cursor and learn where it is.
 */
export class CreditPass {
  #seen: string | undefined;

  constructor(private readonly db: Db) {}

  /** Runs batches until the ledger is read (or the pass's bound); answers the entries read. */
  async run(now: number): Promise<number> {
    if (this.#seen !== undefined) {
      const [at, seq] = this.#seen.split(":") as [string, string];
      if (!(await ledgerHasAfter(this.db, at, Number(seq)))) return 0;
    }
    const seen = (position: string) => {
      this.#seen = position;
    };
    let read = 0;
    for (let i = 0; i < BATCHES_PER_PASS; i++) {
      const n = await creditBatch(this.db, now, seen);
      if (n === undefined) break;
      read += n;
      if (n < CREDIT_BATCH) break;
    }
    return read;
  }
}
