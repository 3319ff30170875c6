import { GRANULARITIES, type Granularity } from "./tables.js";

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The start of the UTC minute, hour, day or month holding `ms` (Unix ms). */
export function bucketStart(granularity: Granularity, ms: number): number {
  switch (granularity) {
    case "minute":
      return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
    case "hour":
      return Math.floor(ms / HOUR_MS) * HOUR_MS;
    case "day":
      return Math.floor(ms / DAY_MS) * DAY_MS;
    case "month": {
      const d = new Date(ms);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
  }
}

/** What a rollup groups by, from one verification event. */
export interface RollupSource {
  time: number;
  workspaceId: string;
  apiId: string | null;
  keyId: string | null;
  identityId: string | null;
  externalId: string | null;
  outcome: string;
  tags: string[];
  spentCredits: number;
}

/** One group of a rollup: its bucket, its dimensions and the sums. */
export interface RollupRow {
  time: number;
  workspaceId: string;
  apiId: string | null;
  keyId: string | null;
  identityId: string | null;
  externalId: string | null;
  outcome: string;
  tags: string[];
  count: number;
  spentCredits: number;
}

/**
 * Sums events into each granularity's groups as they come (`add`), so the event writer does
 * the grouping a little per verification instead of all at once for every flush: the whole
 * batch at flush time took 2-9 ms on the server's thread, a stall every verification in
 * flight waited out.
 *
 * An event's dimensions are serialised once (the group key under which its four buckets,
 * keyed by number, live), and the month bucket is reused while events stay in one month.
 */
export class Rollup {
  private readonly byDims = new Map<string, Map<number, RollupRow>[]>();
  private monthFrom = 0;
  private monthTo = -1;
  /** The previous event and its buckets: a hot key sends the same dimensions again and again. */
  private last: RollupSource | undefined;
  private lastBuckets: Map<number, RollupRow>[] = [];

  add(e: RollupSource): void {
    const tags = e.tags.length < 2 ? e.tags : [...e.tags].sort();
    let buckets = this.last && sameDimensions(this.last, e) ? this.lastBuckets : undefined;
    if (!buckets) {
      const dims = JSON.stringify([e.workspaceId, e.apiId, e.keyId, e.identityId, e.outcome, tags]);
      buckets = this.byDims.get(dims);
      if (!buckets) {
        buckets = GRANULARITIES.map(() => new Map<number, RollupRow>());
        this.byDims.set(dims, buckets);
      }
    }
    this.last = e;
    this.lastBuckets = buckets;
    if (e.time < this.monthFrom || e.time >= this.monthTo) {
      this.monthFrom = bucketStart("month", e.time);
      const d = new Date(this.monthFrom);
      this.monthTo = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
    for (let i = 0; i < GRANULARITIES.length; i++) {
      const g = GRANULARITIES[i] as Granularity;
      const time = g === "month" ? this.monthFrom : bucketStart(g, e.time);
      const rows = buckets[i] as Map<number, RollupRow>;
      const row = rows.get(time);
      if (row) {
        row.count++;
        row.spentCredits += e.spentCredits;
      } else {
        rows.set(time, {
          time,
          workspaceId: e.workspaceId,
          apiId: e.apiId,
          keyId: e.keyId,
          identityId: e.identityId,
          externalId: e.externalId,
          outcome: e.outcome,
          tags: tags === e.tags ? [...tags] : tags,
          count: 1,
          spentCredits: e.spentCredits,
        });
      }
    }
  }

  /**
   * The groups of each granularity, sorted by bucket and then by dimensions, so concurrent
   * writers lock rollup rows in one order (no deadlocks).
   */
  rows(): Record<Granularity, RollupRow[]> {
    // The groups in dimension order, then a stable sort by bucket start.
    const groups = [...this.byDims].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const out = {} as Record<Granularity, RollupRow[]>;
    GRANULARITIES.forEach((g, i) => {
      out[g] = groups
        .flatMap(([, buckets]) => [...(buckets[i] as Map<number, RollupRow>).values()])
        .sort((a, b) => a.time - b.time);
    });
    return out;
  }
}

/** True when two events group together for certain (tags compared in their given order). */
function sameDimensions(a: RollupSource, b: RollupSource): boolean {
  if (
    a.workspaceId !== b.workspaceId ||
    a.apiId !== b.apiId ||
    a.keyId !== b.keyId ||
    a.identityId !== b.identityId ||
    a.outcome !== b.outcome ||
    a.tags.length !== b.tags.length
  )
    return false;
  for (let i = 0; i < a.tags.length; i++) if (a.tags[i] !== b.tags[i]) return false;
  return true;
}
