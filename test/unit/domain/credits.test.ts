import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyRefill,
  creditViolations,
  latestRefillBoundary,
  spendInOrder,
  spendPooledInOrder,
} from "../../../src/domain/credits.js";

const t = (iso: string) => Date.parse(iso);

describe("latest refill boundary", () => {
  it.each([
    // now, refillDay, boundary
    ["2026-03-15T10:00:00Z", null, "2026-03-15T00:00:00Z"],
    ["2026-03-15T00:00:00Z", null, "2026-03-15T00:00:00Z"],
    ["2026-03-14T23:59:59.999Z", null, "2026-03-14T00:00:00Z"],
    ["2026-03-15T10:00:00Z", 15, "2026-03-15T00:00:00Z"],
    ["2026-03-14T10:00:00Z", 15, "2026-02-15T00:00:00Z"],
    ["2026-01-10T00:00:00Z", 15, "2025-12-15T00:00:00Z"],
    // Day 31 in a 28-day February, a leap February, a 30-day April.
    ["2026-02-28T00:00:00Z", 31, "2026-02-28T00:00:00Z"],
    ["2026-02-27T12:00:00Z", 31, "2026-01-31T00:00:00Z"],
    ["2028-02-29T06:00:00Z", 31, "2028-02-29T00:00:00Z"],
    ["2028-02-28T06:00:00Z", 31, "2028-01-31T00:00:00Z"],
    ["2028-02-29T06:00:00Z", 30, "2028-02-29T00:00:00Z"],
    ["2026-04-30T00:00:00Z", 31, "2026-04-30T00:00:00Z"],
    ["2026-04-29T23:00:00Z", 31, "2026-03-31T00:00:00Z"],
    ["2026-05-30T00:00:00Z", 31, "2026-04-30T00:00:00Z"],
    ["2026-05-31T00:00:00Z", 31, "2026-05-31T00:00:00Z"],
    ["2026-03-01T00:00:00Z", 1, "2026-03-01T00:00:00Z"],
  ])("at %s with refillDay %s is %s", (now, day, boundary) => {
    expect(latestRefillBoundary(t(now), day)).toBe(t(boundary));
  });
});

describe("applying refills", () => {
  const daily = {
    remaining: 3,
    refillAmount: 100,
    refillDay: null,
    lastRefillAt: t("2026-03-14T09:00:00Z"),
  };

  it("tops a balance up to the amount once a boundary has passed", () => {
    expect(applyRefill(daily, t("2026-03-14T23:59:59Z"))).toBe(daily);
    expect(applyRefill(daily, t("2026-03-15T00:00:00Z"))).toEqual({
      ...daily,
      remaining: 100,
      lastRefillAt: t("2026-03-15T00:00:00Z"),
    });
  });

  it("never lowers a balance above the amount, and does not add", () => {
    const rich = { ...daily, remaining: 250 };
    expect(applyRefill(rich, t("2026-03-16T00:00:00Z")).remaining).toBe(250);
    const some = { ...daily, remaining: 60 };
    expect(applyRefill(some, t("2026-03-16T00:00:00Z")).remaining).toBe(100);
  });

  it("refills once after a long gap (a top-up, not an accumulation)", () => {
    const later = applyRefill(daily, t("2026-09-01T12:00:00Z"));
    expect(later.remaining).toBe(100);
    expect(later.lastRefillAt).toBe(t("2026-09-01T00:00:00Z"));
    expect(applyRefill(later, t("2026-09-01T23:00:00Z"))).toBe(later);
  });

  it("refills monthly keys on the last day of a shorter month", () => {
    const monthly = {
      remaining: 0,
      refillAmount: 10,
      refillDay: 31,
      lastRefillAt: t("2026-01-31T00:00:00Z"),
    };
    expect(applyRefill(monthly, t("2026-02-27T23:00:00Z")).remaining).toBe(0);
    const feb = applyRefill(monthly, t("2026-02-28T00:00:01Z"));
    expect(feb).toEqual({ ...monthly, remaining: 10, lastRefillAt: t("2026-02-28T00:00:00Z") });
    expect(applyRefill({ ...feb, remaining: 2 }, t("2026-03-30T00:00:00Z")).remaining).toBe(2);
    expect(applyRefill({ ...feb, remaining: 2 }, t("2026-03-31T00:00:00Z")).remaining).toBe(10);
  });

  it("leaves unlimited keys and keys without a refill alone", () => {
    const unlimited = { remaining: null, refillAmount: 100, refillDay: null, lastRefillAt: null };
    expect(applyRefill(unlimited, t("2026-05-01T00:00:00Z"))).toBe(unlimited);
    const noRefill = { remaining: 1, refillAmount: null, refillDay: null, lastRefillAt: null };
    expect(applyRefill(noRefill, t("2026-05-01T00:00:00Z"))).toBe(noRefill);
  });

  it("refills a key that has never been refilled at the latest boundary", () => {
    const never = { ...daily, lastRefillAt: null };
    expect(applyRefill(never, t("2026-03-14T10:00:00Z")).remaining).toBe(100);
  });
});

describe("credit rules", () => {
  it.each([
    [{ remaining: 5, refill: null }, []],
    [{ remaining: null, refill: null }, []],
    [{ remaining: 5, refill: { interval: "daily", amount: 10, refillDay: null } }, []],
    [{ remaining: 5, refill: { interval: "monthly", amount: 10, refillDay: 31 } }, []],
    [
      { remaining: null, refill: { interval: "daily", amount: 10, refillDay: null } },
      ["/credits/remaining"],
    ],
    [
      { remaining: 5, refill: { interval: "daily", amount: 10, refillDay: 3 } },
      ["/credits/refill/refillDay"],
    ],
    [
      { remaining: 5, refill: { interval: "monthly", amount: 10, refillDay: null } },
      ["/credits/refill/refillDay"],
    ],
  ] as const)("%j breaks %j", (input, locations) => {
    expect(creditViolations(input as never, "/credits").map((v) => v.location)).toEqual(locations);
  });
});

describe("spending costs in order", () => {
  it("refuses a cost the balance left does not cover, and still takes a later smaller one", () => {
    expect(spendInOrder(3, [5, 1, 2, 1])).toEqual([
      { taken: false, remaining: 3 },
      { taken: true, remaining: 2 },
      { taken: true, remaining: 0 },
      { taken: false, remaining: 0 },
    ]);
    expect(spendInOrder(0, [1])).toEqual([{ taken: false, remaining: 0 }]);
    expect(spendInOrder(7, [])).toEqual([]);
  });

  it("takes what it reports, never goes below zero, and refuses only what does not fit", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.array(fc.integer({ min: 1, max: 100 }), { maxLength: 50 }),
        (balance, costs) => {
          const out = spendInOrder(balance, costs);
          const taken = costs.filter((_, i) => out[i]?.taken).reduce((a, b) => a + b, 0);
          expect(out.at(-1)?.remaining ?? balance).toBe(balance - taken);
          out.forEach((o, i) => {
            expect(o.remaining).toBeGreaterThanOrEqual(0);
            // A refused cost exceeds the balance it met, which it left as it was.
            if (!o.taken) expect(costs[i]).toBeGreaterThan(o.remaining);
          });
        },
      ),
    );
  });
});

describe("spendPooledInOrder", () => {
  it("takes each cost from the pool and the key's own balance together, or from neither", () => {
    const keys = new Map<string, number | null>([["k1", 2]]);
    const { outcomes, pool } = spendPooledInOrder(5, keys, [
      { holder: "k1", cost: 2 },
      { holder: "k1", cost: 1 },
      { holder: null, cost: 3 },
      { holder: null, cost: 1 },
    ]);
    expect(outcomes).toEqual([
      { taken: true, keyRemaining: 0, poolRemaining: 3 },
      { taken: false, keyRemaining: 0, poolRemaining: 3 },
      { taken: true, keyRemaining: null, poolRemaining: 0 },
      { taken: false, keyRemaining: null, poolRemaining: 0 },
    ]);
    expect(pool).toBe(0);
    expect(keys.get("k1")).toBe(0);
  });

  it("spends only the key's balance when the pool is unlimited", () => {
    const keys = new Map<string, number | null>([["k1", 1]]);
    const { outcomes, pool } = spendPooledInOrder(null, keys, [
      { holder: "k1", cost: 1 },
      { holder: "k1", cost: 1 },
    ]);
    expect(outcomes.map((o) => o.taken)).toEqual([true, false]);
    expect(pool).toBeNull();
  });

  it("never takes more than either balance, and takes what it reports (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.record({ key: fc.nat(2), cost: fc.integer({ min: 1, max: 10 }) }), {
          maxLength: 40,
        }),
        (poolStart, keyStarts, spends) => {
          const keys = new Map<string, number | null>(keyStarts.map((b, i) => [`k${i}`, b]));
          const costs = spends.map((x) => ({
            holder: x.key < keyStarts.length ? `k${x.key}` : null,
            cost: x.cost,
          }));
          const { outcomes, pool } = spendPooledInOrder(poolStart, keys, costs);
          const taken = costs.filter((_, i) => outcomes[i]?.taken);
          const total = taken.reduce((sum, c) => sum + c.cost, 0);
          expect(pool).toBe(poolStart - total);
          expect(pool).toBeGreaterThanOrEqual(0);
          keyStarts.forEach((start, i) => {
            const spent = taken.filter((c) => c.holder === `k${i}`).reduce((a, c) => a + c.cost, 0);
            expect(keys.get(`k${i}`)).toBe(start - spent);
            expect(keys.get(`k${i}`)).toBeGreaterThanOrEqual(0);
          });
        },
      ),
    );
  });
});
