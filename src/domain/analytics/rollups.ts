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
 */
export function rollUp(events: readonly RollupSource[]): Record<Granularity, RollupRow[]> {
  const out = {} as Record<Granularity, RollupRow[]>;
  for (const g of GRANULARITIES) {
    const groups = new Map<string, RollupRow>();
    for (const e of events) {
      const time = bucketStart(g, e.time);
      const tags = [...e.tags].sort();
      const key = JSON.stringify([
        e.workspaceId,
        time,
        e.apiId,
        e.keyId,
        e.identityId,
        e.outcome,
        tags,
      ]);
      const row = groups.get(key);
      if (row) {
        row.count++;
        row.spentCredits += e.spentCredits;
      } else {
        groups.set(key, {
          time,
          workspaceId: e.workspaceId,
          apiId: e.apiId,
          keyId: e.keyId,
          identityId: e.identityId,
          externalId: e.externalId,
          outcome: e.outcome,
          tags,
          count: 1,
          spentCredits: e.spentCredits,
        });
      }
    }
    out[g] = [...groups.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, r]) => r);
  }
  return out;
}
