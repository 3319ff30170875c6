import { describe, expect, it } from "vitest";
import { RefillInterval } from "../../../../gen/latchkey/v2/common_pb.js";
import { CreditsOperation, VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../../harness/server.js";
import { verifierOf } from "../../keys/verify-key/calls.js";
import {
  BY_DAY,
  BY_HOUR,
  BY_MONTH,
  balanceOf,
  DAY,
  expectBalanced,
  freshMonth,
  HOUR,
  pooledIdentity,
  poolOf,
  statementOf,
  totals,
} from "./statements.js";

// analytics.getCreditUsage: a key's or an identity's credit statement in UTC hours, days or
// months, every bucket of the range present (zeros when nothing happened): what was spent,
// refilled and adjusted, exactly, and the verifications by outcome.

const s = useServer();
const verify = verifierOf(s);
const { INCREMENT, DECREMENT, SET } = CreditsOperation;

describe("analytics.getCreditUsage", () => {
  it("buckets spends by hour, day and month, zero-filled, with verifications by outcome", async () => {
    const t0 = freshMonth(s);
    const k = await s.seed.key({ credits: { remaining: 10 } });
    s.clock.set(t0 + HOUR + 5);
    await verify({ key: k.key, credits: { cost: 3n } });
    s.clock.set(t0 + 3 * HOUR);
    await verify({ key: k.key, credits: { cost: 2n } });
    s.clock.set(t0 + DAY + 5 * HOUR);
    await verify({ key: k.key, credits: { cost: 4n } });
    const refused = await verify({ key: k.key, credits: { cost: 2n } });
    expect(refused.code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    await s.app.deps.events.flush();

    const hours = await statementOf(s, { keyId: k.keyId }, t0, t0 + 6 * HOUR, BY_HOUR);
    expect(hours.map((b) => b.time)).toEqual([0, 1, 2, 3, 4, 5].map((h) => t0 + h * HOUR));
    expect(hours.map((b) => b.spent)).toEqual([0, 3, 0, 2, 0, 0]);
    expect(hours.map((b) => b.verifications)).toEqual([{}, { VALID: 1 }, {}, { VALID: 1 }, {}, {}]);
    const days = await statementOf(s, { keyId: k.keyId }, t0, t0 + 3 * DAY, BY_DAY);
    expect(days).toEqual([
      { time: t0, spent: 5, refilled: 0, adjusted: 0, verifications: { VALID: 2 } },
      {
        time: t0 + DAY,
        spent: 4,
        refilled: 0,
        adjusted: 0,
        verifications: { VALID: 1, USAGE_EXCEEDED: 1 },
      },
      { time: t0 + 2 * DAY, spent: 0, refilled: 0, adjusted: 0, verifications: {} },
    ]);
    const months = await statementOf(s, { keyId: k.keyId }, t0, t0 + 40 * DAY, BY_MONTH);
    expect(months.map((b) => [b.time, b.spent])).toEqual([
      [t0, 9],
      [new Date(t0).setUTCMonth(new Date(t0).getUTCMonth() + 1), 0],
    ]);
    // A range that starts inside a bucket counts only the moves at or after its start, in
    // the bucket holding the start.
    const late = await statementOf(s, { keyId: k.keyId }, t0 + 2 * HOUR, t0 + DAY, BY_DAY);
    expect(late.map((b) => [b.time, b.spent, b.verifications])).toEqual([[t0, 2, { VALID: 1 }]]);
    // Whole buckets and parts of buckets in one range: the counts agree with the moves.
    const mixed = await statementOf(s, { keyId: k.keyId }, t0 + 2 * HOUR, t0 + DAY + 6 * HOUR);
    expect(mixed.map((b) => [b.spent, b.verifications])).toEqual([
      [2, { VALID: 1 }],
      [4, { VALID: 1, USAGE_EXCEEDED: 1 }],
    ]);
    const hoursAcross = await statementOf(
      s,
      { keyId: k.keyId },
      t0 + 1,
      t0 + 4 * HOUR - 1,
      BY_HOUR,
    );
    expect(hoursAcross.map((b) => b.verifications)).toEqual([{}, { VALID: 1 }, {}, { VALID: 1 }]);
    expectBalanced(days, 10, await balanceOf(s, k.keyId), "key");
  });

  it("records refills and every manual change, signed", async () => {
    const t0 = freshMonth(s);
    const refill = { interval: RefillInterval.DAILY, amount: 50n };
    const k = await s.seed.key({
      credits: { remaining: 10, refill: { interval: "daily", amount: 50 } },
    });
    const keyId = k.keyId;
    await verify({ key: k.key, credits: { cost: 4n } }); // 6 left
    s.clock.set(t0 + DAY + HOUR);
    await verify({ key: k.key, credits: { cost: 1n } }); // refilled to 50, 49 left
    s.clock.set(t0 + DAY + 2 * HOUR);
    await s.api.keys.updateCredits({ keyId, operation: INCREMENT, value: 10n }); // 59
    await s.api.keys.updateCredits({ keyId, operation: DECREMENT, value: 1000n }); // 0
    await s.api.keys.updateCredits({ keyId, operation: SET, value: 7n }); // 7
    s.clock.set(t0 + DAY + 3 * HOUR);
    await s.api.keys.updateKey({ keyId, credits: { remaining: 20n, refill } }); // 20
    s.clock.set(t0 + 2 * DAY + HOUR);
    // A refill is recorded when it is applied: here by the change, which then adjusts.
    await s.api.keys.updateCredits({ keyId, operation: SET }); // 50 by refill, then unlimited
    const hours = await statementOf(s, { keyId }, t0, t0 + 3 * DAY, BY_HOUR);
    const at = (ms: number) => hours.find((b) => b.time === ms);
    expect(at(t0)).toMatchObject({ spent: 4, refilled: 0, adjusted: 0 });
    expect(at(t0 + DAY + HOUR)).toMatchObject({ spent: 1, refilled: 44, adjusted: 0 });
    expect(at(t0 + DAY + 2 * HOUR)).toMatchObject({ spent: 0, refilled: 0, adjusted: 10 - 59 + 7 });
    expect(at(t0 + DAY + 3 * HOUR)).toMatchObject({ adjusted: 13 });
    expect(at(t0 + 2 * DAY + HOUR)).toMatchObject({ refilled: 30, adjusted: -50 });
    expectBalanced(hours, 10, await balanceOf(s, keyId), "key");

    const pool = await pooledIdentity(s, 30);
    await s.api.identities.updateIdentity({ identity: pool.id, credits: { remaining: 45n } });
    const byId = await statementOf(s, { identityId: pool.id }, t0, t0 + 3 * DAY);
    expect(totals(byId)).toEqual({ spent: 0, refilled: 0, adjusted: 15 });
    expect(await statementOf(s, { externalId: pool.externalId }, t0, t0 + 3 * DAY)).toEqual(byId);
    expectBalanced(byId, 30, await poolOf(s, pool.id), "pool");
  });

  it("records a pooled spend under the pool, the key's own balance, and a key without one", async () => {
    const t0 = freshMonth(s);
    const pool = await pooledIdentity(s, 100);
    const bare = await s.seed.key({ externalId: pool.externalId });
    const own = await s.seed.key({ externalId: pool.externalId, credits: { remaining: 20 } });
    await verify({ key: bare.key, credits: { cost: 7n } });
    await verify({ key: own.key, credits: { cost: 5n } });
    const end = t0 + DAY;
    expect(totals(await statementOf(s, { identityId: pool.id }, t0, end)).spent).toBe(12);
    expect(totals(await statementOf(s, { keyId: bare.keyId }, t0, end)).spent).toBe(7);
    expect(totals(await statementOf(s, { keyId: own.keyId }, t0, end)).spent).toBe(5);
    expectBalanced(
      await statementOf(s, { identityId: pool.id }, t0, end),
      100,
      await poolOf(s, pool.id),
      "pool",
    );
    expectBalanced(
      await statementOf(s, { keyId: own.keyId }, t0, end),
      20,
      await balanceOf(s, own.keyId),
      "key",
    );
  });

  it("moves a rerolled key's balance to the new key, which records what the old key spends", async () => {
    const t0 = freshMonth(s);
    const old = await s.seed.key({ credits: { remaining: 40 } });
    await verify({ key: old.key, credits: { cost: 5n } });
    const { data } = await s.api.keys.rerollKey({ keyId: old.keyId, expiration: BigInt(DAY) });
    const newKeyId = data?.keyId as string;
    await verify({ key: old.key, credits: { cost: 3n } });
    await verify({ key: data?.key as string, credits: { cost: 2n } });
    const end = t0 + DAY;
    const oldStatement = await statementOf(s, { keyId: old.keyId }, t0, end);
    expect(totals(oldStatement)).toEqual({ spent: 5, refilled: 0, adjusted: -35 });
    expectBalanced(oldStatement, 40, 0, "old key");
    const newStatement = await statementOf(s, { keyId: newKeyId }, t0, end);
    expect(totals(newStatement)).toEqual({ spent: 5, refilled: 0, adjusted: 35 });
    expectBalanced(newStatement, 0, await balanceOf(s, newKeyId), "new key");

    // The new key deleted for good: the old one gets its own copy of the balance back.
    await s.api.keys.deleteKey({ keyId: newKeyId, permanent: true });
    await verify({ key: old.key, credits: { cost: 1n } });
    const afterCopy = await statementOf(s, { keyId: old.keyId }, t0, end);
    expect(totals(afterCopy)).toEqual({ spent: 6, refilled: 0, adjusted: -35 + 30 });
    expectBalanced(afterCopy, 40, await balanceOf(s, old.keyId), "old key with its copy");
  });
});
