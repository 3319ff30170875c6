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
