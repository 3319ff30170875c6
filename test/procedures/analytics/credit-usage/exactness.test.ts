import { describe, expect, it } from "vitest";
import { CreditsOperation, VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../../harness/server.js";
import { verifierOf } from "../../keys/verify-key/calls.js";
import {
  BY_HOUR,
  balanceOf,
  expectBalanced,
  freshMonth,
  HOUR,
  pooledIdentity,
  poolOf,
  statementOf,
  totals,
} from "./statements.js";

// The rule a statement keeps, under load: many concurrent verifications through several keys
// of one pooled identity (grouped into batch statements), reservations and their settlements,
// manual changes and a reroll, spread over hours. For the pool and for every key: the balance
// at the start plus refilled and adjusted less spent is the balance at the end; ranges split
// at arbitrary instants sum to the whole; a key without credits of its own is charged exactly
// what its VALID verifications cost.

const s = useServer();
const verify = verifierOf(s);
const ROUNDS = 4;
const PER_ROUND = 60;

describe("a credit statement under concurrency", () => {
  it("sums exactly to the balances, split anywhere", async () => {
    const t0 = freshMonth(s);
    const pool = await pooledIdentity(s, 2_000);
    const bare = await s.seed.key({ externalId: pool.externalId });
    const apiId = bare.apiId;
    const bare2 = await s.seed.key({ externalId: pool.externalId, apiId });
    const own = await s.seed.key({
      externalId: pool.externalId,
      apiId,
      credits: { remaining: 400 },
    });
    const solo = await s.seed.key({ apiId, credits: { remaining: 600 } });
    let rerolled: { keyId: string; key: string } | undefined;
    const charged = new Map<string, number>();
    const charge = (keyId: string, n: number) => charged.set(keyId, (charged.get(keyId) ?? 0) + n);

    for (let round = 0; round < ROUNDS; round++) {
      s.clock.set(t0 + round * 5 * HOUR + round * 997);
      const keys = [bare, bare2, own, solo, ...(rerolled ? [rerolled] : [])];
      const calls = Array.from({ length: PER_ROUND }, async (_, i) => {
        const k = keys[i % keys.length] as { keyId: string; key: string };
        const reserve = i % 7 === 0;
        const amount = BigInt(1 + (i % 4));
        const data = await verify(
          { key: k.key, credits: reserve ? { reserve: amount } : { cost: amount } },
          s.rootKey,
        );
        if (data.code === VerifyKeyCode.VALID) charge(k.keyId, Number(amount));
        return { data, amount };
      });
      const answers = await Promise.all(calls);
      // Within the reservations' 15 minutes, so that the settlements move balances.
      s.clock.advance(5 * 60_000 + 13);
      // Settle the reservations below, at and above what they held, all at once.
      const settled = await Promise.all(
        answers
          .filter((a) => a.data.reservationId !== undefined)
          .map((a, j) =>
            s.api.keys.settleCredits({
              reservationId: a.data.reservationId as string,
              used: a.amount + BigInt((j % 3) - 1),
            }),
          ),
      );
      expect(settled.some((r) => (r.data?.refunded ?? 0n) > 0n)).toBe(true);
      expect(settled.some((r) => (r.data?.used ?? 0n) > (r.data?.reserved ?? 0n))).toBe(true);
      await s.api.keys.updateCredits({
        keyId: own.keyId,
        operation: round % 2 ? CreditsOperation.INCREMENT : CreditsOperation.DECREMENT,
        value: 7n,
      });
      await s.api.identities.updateIdentity({
        identity: pool.id,
        credits: { remaining: BigInt(1_500 + round) },
      });
      if (round === 1) {
        s.clock.advance(HOUR);
        const { data } = await s.api.keys.rerollKey({
          keyId: solo.keyId,
          expiration: BigInt(HOUR * 48),
        });
        rerolled = { keyId: data?.keyId as string, key: data?.key as string };
      }
    }
    const end = t0 + ROUNDS * 5 * HOUR + HOUR;
    const whole = (subject: { keyId: string } | { identityId: string }) =>
      statementOf(s, subject, t0, end, BY_HOUR);

    expectBalanced(await whole({ identityId: pool.id }), 2_000, await poolOf(s, pool.id), "pool");
    expectBalanced(await whole({ keyId: own.keyId }), 400, await balanceOf(s, own.keyId), "own");
    expectBalanced(await whole({ keyId: solo.keyId }), 600, 0, "rerolled key");
    const next = rerolled as { keyId: string };
    expectBalanced(await whole(next), 0, await balanceOf(s, next.keyId), "new key");

    // A key without a balance of its own: its reservations were settled at -1, 0 and +1 of
    // what they held, so its statement is its VALID charges give or take those.
    const bareSpent = totals(await whole({ keyId: bare.keyId })).spent;
    expect(Math.abs(bareSpent - (charged.get(bare.keyId) ?? 0))).toBeLessThanOrEqual(ROUNDS * 3);
    expect(bareSpent).toBeGreaterThan(0);

    // Split anywhere: the pieces add up to the whole, column by column.
    for (const subject of [{ identityId: pool.id }, { keyId: own.keyId }, { keyId: bare.keyId }]) {
      const all = totals(await whole(subject));
      const cuts = [
        t0,
        t0 + 1,
        t0 + 5 * HOUR + 996,
        t0 + 6 * HOUR + 2_010,
        t0 + 11 * HOUR + 7,
        end,
      ];
      const pieces = { spent: 0, refilled: 0, adjusted: 0 };
      for (let i = 0; i + 1 < cuts.length; i++) {
        const part = totals(
          await statementOf(s, subject, cuts[i] as number, cuts[i + 1] as number, BY_HOUR),
        );
        pieces.spent += part.spent;
        pieces.refilled += part.refilled;
        pieces.adjusted += part.adjusted;
      }
      expect(pieces, JSON.stringify(subject)).toEqual(all);
    }
  });
});
