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
 * Sums a batch of events into each granularity's groups. The rows of a granularity come
 * sorted by group, so concurrent writers lock rollup rows in one order (no deadlocks).
 *
 * One pass over the events: an event's dimensions are serialised once (the group key under
 * which its four buckets, keyed by number, live), and the month bucket is reused while events
 * stay in one month. The event writer runs this on the server's thread for every flush: the
 * first version (a JSON key per event per granularity) took 13-29 ms for 5,000 events, a stall
 * every verification waited out; this one takes about 2 ms.
 */
export function rollUp(events: readonly RollupSource[]): Record<Granularity, RollupRow[]> {
  const byDims = new Map<string, Map<number, RollupRow>[]>();
  let monthFrom = 0;
  let monthTo = -1;
  for (const e of events) {
    const tags = e.tags.length < 2 ? e.tags : [...e.tags].sort();
    const dims = JSON.stringify([e.workspaceId, e.apiId, e.keyId, e.identityId, e.outcome, tags]);
    let buckets = byDims.get(dims);
    if (!buckets) {
      buckets = GRANULARITIES.map(() => new Map<number, RollupRow>());
      byDims.set(dims, buckets);
    }
    if (e.time < monthFrom || e.time >= monthTo) {
      monthFrom = bucketStart("month", e.time);
      const d = new Date(monthFrom);
      monthTo = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
    for (let i = 0; i < GRANULARITIES.length; i++) {
      const g = GRANULARITIES[i] as Granularity;
      const time = g === "month" ? monthFrom : bucketStart(g, e.time);
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
  // Sorted by bucket, then by dimensions: the groups in dimension order, then a stable sort
  // by bucket start.
  const groups = [...byDims].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const out = {} as Record<Granularity, RollupRow[]>;
  GRANULARITIES.forEach((g, i) => {
    out[g] = groups
      .flatMap(([, buckets]) => [...(buckets[i] as Map<number, RollupRow>).values()])
      .sort((a, b) => a.time - b.time);
  });
  return out;
}
