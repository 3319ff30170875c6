import { describe, expect, it } from "vitest";
import { MemoryLimiter } from "../../src/ratelimit/memory.js";

const check = (counter: string, limit: number, cost = 1, durationMs = 1000) => ({
  counter,
  limit,
  cost,
  durationMs,
});

describe("the in-process limiter", () => {
  it("admits up to the limit in a window and resets at the window's end", async () => {
    const l = new MemoryLimiter();
    const now = 10_500;
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await l.check([check("a", 3)], now));
    expect(results.map((r) => [r.success, r.outcomes[0]?.remaining, r.outcomes[0]?.reset])).toEqual(
      [
        [true, 2, 11_000],
        [true, 1, 11_000],
        [true, 0, 11_000],
        [false, 0, 11_000],
      ],
    );
    expect((await l.check([check("a", 3)], 10_999)).success).toBe(false);
    expect((await l.check([check("a", 3)], 11_000)).outcomes[0]).toEqual({
      passed: true,
      remaining: 2,
      reset: 12_000,
    });
    await l.close();
  });

  it("is all-or-nothing over several counters, showing the fitting ones with their cost added back", async () => {
    const l = new MemoryLimiter();
    await l.check([check("minute", 1)], 0);
    const d = await l.check([check("month", 200), check("minute", 1)], 0);
    expect(d.success).toBe(false);
    expect(d.outcomes).toEqual([
      { passed: true, remaining: 200, reset: 1000 },
      { passed: false, remaining: 0, reset: 1000 },
    ]);
    expect((await l.check([check("month", 200)], 0)).outcomes[0]?.remaining).toBe(199);
    await l.close();
  });

  it("holds a counter named twice in one decision to the sum of its costs", async () => {
    const l = new MemoryLimiter();
    const twice = await l.check([check("same", 1), check("same", 1)], 0);
    expect(twice.success).toBe(false);
    expect(twice.outcomes.map((o) => o.passed)).toEqual([true, false]);
    // Nothing was taken: the counter still has its one token.
    expect((await l.check([check("same", 1)], 0)).success).toBe(true);
    const fits = await l.check([check("pair", 2), check("pair", 2)], 0);
    expect(fits.success).toBe(true);
    expect(fits.outcomes.map((o) => o.remaining)).toEqual([1, 0]);
    expect((await l.check([check("pair", 2)], 0)).success).toBe(false);
    await l.close();
  });

  it("past 100,000 counters sweeps expired ones at most once a second, not on every decision", async () => {
    const l = new MemoryLimiter();
    const fill = async (at: number) => {
      for (let i = 0; i <= 100_000; i++) await l.check([check(`c${at}_${i}`, 5)], at);
    };
    await fill(0); // windows of 1 s: all end at 1000
    await l.check([check("probe", 5)], 1_500);
    expect(l.size).toBeLessThan(10); // swept: everything had expired
    await fill(1_600); // end at 2000
    await l.check([check("probe", 5)], 2_200);
    expect(l.size).toBeGreaterThan(100_000); // expired, but the last sweep was 700 ms ago
    await l.check([check("probe", 5)], 2_600);
    expect(l.size).toBeLessThan(10);
    await l.close();
  });

  it("checks without spending at cost 0, and refunds within the window", async () => {
    const l = new MemoryLimiter();
    expect((await l.check([check("z", 1, 0)], 0)).outcomes[0]?.remaining).toBe(1);
    await l.check([check("z", 1)], 0);
    expect((await l.check([check("z", 1, 0)], 0)).success).toBe(true);
    await l.refund([check("z", 1)], 0);
    expect((await l.check([check("z", 1)], 0)).success).toBe(true);
    await l.close();
  });

  it("denies a limit of 0 and keeps durations apart", async () => {
    const l = new MemoryLimiter();
    expect((await l.check([check("x", 0)], 0)).success).toBe(false);
    await l.check([check("y", 1, 1, 1000)], 0);
    expect((await l.check([check("y", 1, 1, 2000)], 0)).success).toBe(true);
    await l.close();
  });
});
