import { describe, expect, it } from "vitest";
import { currentEngine } from "../../harness/engine.js";
import { DOORS, useServer } from "../../harness/server.js";

// PGlite has one connection; exactness under concurrency is a PostgreSQL property.
describe.skipIf(currentEngine() !== "postgres")("credits under concurrency", () => {
  const s = useServer();

  it("gives exactly 100 VALID of 500 concurrent verifications on remaining: 100", async () => {
    const k = await s.seed.key({ credits: { remaining: 100 } });
    const answers = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        s.call(
          DOORS[i % DOORS.length] as (typeof DOORS)[number],
          "keys.verifyKey",
          { key: k.key },
          null,
        ),
      ),
    );
    const codes = answers.map((a) => a.data?.code ?? `HTTP ${a.status}`);
    const valid = codes.filter((c) => c === "VALID").length;
    const exceeded = codes.filter((c) => c === "USAGE_EXCEEDED").length;
    console.log(`500 concurrent verifications: ${valid} VALID, ${exceeded} USAGE_EXCEEDED`);
    expect(valid).toBe(100);
    expect(exceeded).toBe(400);
    const rows = await s.db.query<{ remaining: number }>(
      "select remaining from keys where id = $1",
      [k.keyId],
    );
    expect(rows[0]?.remaining).toBe(0);
    // Every VALID answer reported a distinct balance: 99 down to 0.
    const balances = answers
      .filter((a) => a.data?.code === "VALID")
      .map((a) => a.data.credits as number);
    expect(new Set(balances).size).toBe(100);
    expect(Math.min(...balances)).toBe(0);
  });

  it("spends mixed costs exactly: never below zero, the balance accounts for every VALID", async () => {
    const k = await s.seed.key({ credits: { remaining: 1000 } });
    const costs = Array.from({ length: 300 }, (_, i) => 1 + (i % 7));
    const answers = await Promise.all(
      costs.map((cost) =>
        s.call("json", "keys.verifyKey", { key: k.key, credits: { cost } }, null),
      ),
    );
    const spent = answers.reduce(
      (sum, a, i) => sum + (a.data?.code === "VALID" ? (costs[i] as number) : 0),
      0,
    );
    const rows = await s.db.query<{ remaining: number }>(
      "select remaining from keys where id = $1",
      [k.keyId],
    );
    console.log(`mixed costs: spent ${spent}, remaining ${rows[0]?.remaining}`);
    expect((rows[0]?.remaining ?? -1) + spent).toBe(1000);
    expect(rows[0]?.remaining).toBeGreaterThanOrEqual(0);
    // A refusal is only for a cost above the balance it met (grouped spends included).
    const wronglyRefused = answers.filter(
      (a, i) => a.data?.code === "USAGE_EXCEEDED" && (costs[i] as number) <= a.data.credits,
    );
    expect(wronglyRefused).toEqual([]);
  });
});
