import { describe, expect, it } from "vitest";
import { bucketStart, type RollupSource, rollUp } from "../../../src/domain/analytics/rollups.js";
import { analyticsScope } from "../../../src/domain/analytics/scope.js";

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

describe("analytics scope of a root key", () => {
  it.each([
    [["api.*.read_analytics"], null],
    [["*.*.*"], null],
    [["api.*.*"], null],
    [
      ["api.api_1.read_analytics", "api.api_2.*"],
      ["api_1", "api_2"],
    ],
    [["api.api_1.read_key", "rbac.*.read_role"], []],
    [["ratelimit.*.read_analytics"], []],
  ] as const)("%o reads %o", (granted, scope) => {
    expect(analyticsScope(granted)).toEqual(scope);
  });
});
