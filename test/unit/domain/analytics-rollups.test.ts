import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bucketStart, Rollup, type RollupSource } from "../../../src/domain/analytics/rollups.js";
import { GRANULARITIES } from "../../../src/domain/analytics/tables.js";

const t = (iso: string) => Date.parse(iso);

describe("rollup buckets (UTC)", () => {
  it.each([
    ["minute", "2026-03-15T10:42:17.123Z", "2026-03-15T10:42:00Z"],
    ["hour", "2026-03-15T10:42:17.123Z", "2026-03-15T10:00:00Z"],
    ["day", "2026-03-15T23:59:59.999Z", "2026-03-15T00:00:00Z"],
    ["month", "2026-03-31T23:59:59.999Z", "2026-03-01T00:00:00Z"],
    ["month", "2024-02-29T12:00:00Z", "2024-02-01T00:00:00Z"],
    ["month", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"],
  ] as const)("%s of %s starts at %s", (g, at, start) => {
    expect(bucketStart(g, t(at))).toBe(t(start));
  });
});

const event = (over: Partial<RollupSource>): RollupSource => ({
  time: t("2026-03-15T10:42:00Z"),
  workspaceId: "ws_1",
  apiId: "api_1",
  keyId: "key_1",
  identityId: null,
  externalId: null,
  outcome: "VALID",
  tags: [],
  spentCredits: 1,
  ...over,
});

/** A batch's rollup, as the event writer builds it: one event at a time, then the rows. */
function rollUp(events: readonly RollupSource[]) {
  const rollup = new Rollup();
  for (const e of events) rollup.add(e);
  return rollup.rows();
}

describe("rollUp", () => {
  it("sums events of one group and keeps groups apart, at every granularity", () => {
    const batch = [
      event({}),
      event({ time: t("2026-03-15T10:42:59Z"), spentCredits: 2 }),
      event({ time: t("2026-03-15T10:43:00Z") }),
      event({ outcome: "RATE_LIMITED", spentCredits: 0 }),
      event({ tags: ["b", "a"] }),
      event({ tags: ["a", "b"] }),
    ];
    const r = rollUp(batch);
    expect(r.minute.map((row) => [row.outcome, row.tags, row.count, row.spentCredits])).toEqual(
      expect.arrayContaining([
        ["VALID", [], 2, 3],
        ["VALID", [], 1, 1],
        ["RATE_LIMITED", [], 1, 0],
        ["VALID", ["a", "b"], 2, 2],
      ]),
    );
    expect(r.minute).toHaveLength(4);
    expect(r.hour).toHaveLength(3);
    for (const g of ["minute", "hour", "day", "month"] as const) {
      expect(r[g].reduce((n, row) => n + row.count, 0)).toBe(batch.length);
    }
  });

  it("orders each granularity's rows the same way whatever the batch order", () => {
    const a = event({ keyId: "key_a" });
    const b = event({ keyId: "key_b" });
    expect(rollUp([a, b]).day).toEqual(rollUp([b, a]).day);
  });
});

/** The plainest grouping there is: a JSON key of bucket and dimensions per event. */
function naiveRollUp(events: readonly RollupSource[]) {
  return Object.fromEntries(
    GRANULARITIES.map((g) => {
      const groups = new Map<string, { count: number; spentCredits: number }>();
      for (const e of events) {
        const k = JSON.stringify([
          bucketStart(g, e.time),
          e.workspaceId,
          e.apiId,
          e.keyId,
          e.identityId,
          e.outcome,
          e.tags.toSorted(),
        ]);
        const sum = groups.get(k) ?? { count: 0, spentCredits: 0 };
        sum.count++;
        sum.spentCredits += e.spentCredits;
        groups.set(k, sum);
      }
      return [g, groups];
    }),
  );
}

describe("rollUp against the plainest grouping", () => {
  const pick = <T>(...xs: T[]) => fc.constantFrom(...xs);
  const anEvent = fc.record({
    // Around month, day and hour boundaries (2024-02-29 23:59 UTC, +-3 minutes).
    time: fc.integer({ min: 1709251020000 - 180_000, max: 1709251020000 + 180_000 }),
    workspaceId: pick("ws_1", "ws_2"),
    apiId: pick("api_1", null),
    keyId: pick("key_1", "key_2", null),
    identityId: pick("id_1", null),
    externalId: pick("user_1", null),
    outcome: pick("VALID", "RATE_LIMITED", "NOT_FOUND"),
    tags: fc.array(pick("a", "b", "c,d", '"q"'), { maxLength: 3 }),
    spentCredits: fc.integer({ min: 0, max: 5 }),
  });

  // Runs of one event's dimensions (a hot key), where now and then one event differs from
  // the one before it in a single dimension, or only in the order of its tags.
  const change = fc.constantFrom(
    "none",
    "none",
    "workspace",
    "api",
    "key",
    "identity",
    "outcome",
    "tags",
    "tag value",
    "tag order",
  );
  const runs = fc
    .array(fc.tuple(anEvent, fc.array(change, { minLength: 1, maxLength: 6 })), { maxLength: 40 })
    .map((xs) =>
      xs.flatMap(([e, changes]) =>
        changes.map((c, i) => ({
          ...e,
          time: e.time + i,
          workspaceId: c === "workspace" ? "ws_other" : e.workspaceId,
          apiId: c === "api" ? "api_other" : e.apiId,
          keyId: c === "key" ? null : e.keyId,
          identityId: c === "identity" ? "id_other" : e.identityId,
          outcome: c === "outcome" ? "USAGE_EXCEEDED" : e.outcome,
          tags:
            c === "tags"
              ? [...e.tags, "x"]
              : c === "tag value"
                ? e.tags.map((t, j) => (j === 0 ? "y" : t))
                : c === "tag order"
                  ? e.tags.toReversed()
                  : e.tags,
        })),
      ),
    );

  it.each([
    ["any events", fc.array(anEvent, { maxLength: 200 })],
    ["runs of one group", runs],
  ])("gives the same groups and sums, each granularity sorted by bucket (%s)", (_, batches) => {
    fc.assert(
      fc.property(batches, (events) => {
        const got = rollUp(events);
        const want = naiveRollUp(events);
        for (const g of GRANULARITIES) {
          const rows = got[g];
          expect(rows.length).toBe(want[g]?.size);
          for (const r of rows) {
            const k = JSON.stringify([
              r.time,
              r.workspaceId,
              r.apiId,
              r.keyId,
              r.identityId,
              r.outcome,
              r.tags,
            ]);
            expect(want[g]?.get(k)).toEqual({ count: r.count, spentCredits: r.spentCredits });
          }
          for (let i = 1; i < rows.length; i++) {
            expect((rows[i] as { time: number }).time).toBeGreaterThanOrEqual(
              (rows[i - 1] as { time: number }).time,
            );
          }
        }
      }),
    );
  });
});
