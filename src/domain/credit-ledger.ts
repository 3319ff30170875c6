import { bucketStart } from "./analytics/rollups.js";
import type { Granularity } from "./analytics/tables.js";

/**
 * The credit ledger's rules: what one entry records and how a statement buckets the entries.
 * An entry is the moves of one balance (a key's, or an identity's pool) in one statement or
 * transaction: `spent` charged (negative for what a settlement gave back), `refilled` added by
 * refills, `adjusted` changed by hand; so for any range, the balance at its start plus
 * refilled and adjusted less spent is the balance at its end. An unlimited balance counts as
 * 0: making a balance unlimited adjusts it down to 0, limiting it again adjusts it up.
 */
export interface LedgerEntry {
  /** The key holding the balance, or the identity of the pool. */
  subjectId: string;
  spent: number;
  refilled: number;
  adjusted: number;
}

/** A balance as the ledger counts it: unlimited is 0. */
const counted = (balance: number | null) => balance ?? 0;

/**
 * The entry of a change made by hand: the balance was `stored`, a due refill raised it to
 * `refilled` (the same when none was due) and the change left it at `next`. Undefined when
 * nothing moved.
 */
export function changeEntry(
  subjectId: string,
  stored: number | null,
  refilled: number | null,
  next: number | null,
): LedgerEntry | undefined {
  const entry = {
    subjectId,
    spent: 0,
    refilled: counted(refilled) - counted(stored),
    adjusted: counted(next) - counted(refilled),
  };
  return moves(entry) ? entry : undefined;
}

/**
 * The entry of a balance a spend or a settlement moved: the balance was `stored`, a due
 * refill raised it to `refilled` (the same when none was due) and the charges left it at
 * `after` (negative spent when a settlement gave credits back).
 */
export function spendEntry(
  subjectId: string,
  stored: number,
  refilled: number,
  after: number,
): LedgerEntry {
  return { subjectId, spent: refilled - after, refilled: refilled - stored, adjusted: 0 };
}

/** Whether an entry records any move (an entry of zeros is never written). */
export function moves(e: LedgerEntry): boolean {
  return e.spent !== 0 || e.refilled !== 0 || e.adjusted !== 0;
}

/** Buckets a statement may have at most; a longer range is refused (400 naming `end`). */
export const MAX_STATEMENT_BUCKETS = 1000;

/** The width of an hour or day bucket in ms (months vary). */
const WIDTH_MS = { hour: 3_600_000, day: 86_400_000 } as const;

/** A statement's granularities: those of the verification rollups but minutes. */
export type StatementGranularity = Exclude<Granularity, "minute">;

/**
 * How many buckets cover [start, end) (end > start): each bucket is the UTC hour, day or month
 * holding one instant of the range, the first the one holding `start`.
 */
export function bucketCount(g: StatementGranularity, start: number, end: number): number {
  const first = bucketStart(g, start);
  const last = bucketStart(g, end - 1);
  if (g !== "month") return (last - first) / WIDTH_MS[g] + 1;
  const a = new Date(first);
  const b = new Date(last);
  return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth() + 1;
}

/** The starts of the buckets covering [start, end), in order (bounded by `bucketCount`). */
export function bucketStarts(g: StatementGranularity, start: number, end: number): number[] {
  const out: number[] = [];
  for (let t = bucketStart(g, start); t < end; t = nextBucket(g, t)) out.push(t);
  return out;
}

function nextBucket(g: StatementGranularity, t: number): number {
  if (g !== "month") return t + WIDTH_MS[g];
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** A range of instants, [from, to) in Unix ms. */
export type Range = readonly [from: number, to: number];

/**
 * Splits [start, end) into the buckets it covers whole (`whole`, bucket-aligned at both ends)
 * and the parts of at most two buckets it covers in part (`partial`): the verification counts
 * of whole buckets are read from the rollups, and only the partial ones from the raw events.
 */
export function splitRange(
  g: StatementGranularity,
  start: number,
  end: number,
): { whole: Range | undefined; partial: Range[] } {
  const first = bucketStart(g, start);
  const wholeFrom = first === start ? start : nextBucket(g, first);
  const wholeTo = bucketStart(g, end);
  if (wholeFrom >= wholeTo) return { whole: undefined, partial: [[start, end]] };
  const partial: Range[] = [];
  if (start < wholeFrom) partial.push([start, wholeFrom]);
  if (wholeTo < end) partial.push([wholeTo, end]);
  return { whole: [wholeFrom, wholeTo], partial };
}
