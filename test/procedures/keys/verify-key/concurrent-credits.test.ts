import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { currentEngine } from "../../../harness/engine.js";
import { useServer } from "../../../harness/server.js";
import { verifyWith } from "./calls.js";

// keys.verifyKey under concurrency: a balance is spent exactly, never below zero, whatever
// the number of verifications in flight. PGlite has one connection; exactness under
// concurrency is a PostgreSQL property.

describe.skipIf(currentEngine() !== "postgres")("keys.verifyKey credits under concurrency", () => {
  const s = useServer();

  /** The balance stored for the key. */
  const stored = async (keyId: string) =>
    (
      await s.db.query<{ remaining: number }>("select remaining from keys where id = $1", [keyId])
    )[0]?.remaining;

  it("gives exactly 100 VALID of 500 concurrent verifications on remaining: 100", async () => {
    const k = await s.seed.key({ credits: { remaining: 100 } });
    const anonymous = s.as(null);
    const answers = await Promise.all(
      Array.from({ length: 500 }, () => verifyWith(anonymous, { key: k.key })),
    );
    const valid = answers.filter((a) => a.code === VerifyKeyCode.VALID);
    const exceeded = answers.filter((a) => a.code === VerifyKeyCode.USAGE_EXCEEDED);
    console.log(
      `500 concurrent verifications: ${valid.length} VALID, ${exceeded.length} USAGE_EXCEEDED`,
    );
    expect(valid.length).toBe(100);
    expect(exceeded.length).toBe(400);
    expect(await stored(k.keyId)).toBe(0);
    // Every VALID answer reported a distinct balance: 99 down to 0.
    const balances = valid.map((a) => a.credits);
    expect(new Set(balances).size).toBe(100);
    expect(balances).toContain(0n);
    expect(balances.every((b) => b !== undefined && b >= 0n && b <= 99n)).toBe(true);
  });

  it("spends mixed costs exactly: never below zero, the balance accounts for every VALID", async () => {
    const k = await s.seed.key({ credits: { remaining: 1000 } });
    const costs = Array.from({ length: 300 }, (_, i) => 1 + (i % 7));
    const anonymous = s.as(null);
    const answers = await Promise.all(
      costs.map((cost) => verifyWith(anonymous, { key: k.key, credits: { cost: BigInt(cost) } })),
    );
    const spent = answers.reduce(
      (sum, a, i) => sum + (a.code === VerifyKeyCode.VALID ? (costs[i] as number) : 0),
      0,
    );
    const remaining = await stored(k.keyId);
    console.log(`mixed costs: spent ${spent}, remaining ${remaining}`);
    expect((remaining ?? -1) + spent).toBe(1000);
    expect(remaining).toBeGreaterThanOrEqual(0);
    // A refusal is only for a cost above the balance it met (grouped spends included).
    const wronglyRefused = answers.filter(
      (a, i) =>
        a.code === VerifyKeyCode.USAGE_EXCEEDED && BigInt(costs[i] as number) <= (a.credits ?? -1n),
    );
    expect(wronglyRefused).toEqual([]);
  });
});
