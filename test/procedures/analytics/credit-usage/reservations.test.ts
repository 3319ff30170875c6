import { describe, expect, it } from "vitest";
import { CreditsOperation, VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { sweepReservations } from "../../../../src/services/keys/reservation-sweep.js";
import { useServer } from "../../../harness/server.js";
import { verifierOf } from "../../keys/verify-key/calls.js";
import {
  BY_HOUR,
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

// What reservations, settlements and idempotent repeats leave in a credit statement: a
// reservation is spent when it is made, its settlement gives back (negative spent) or charges
// an extra (positive) when it is settled, and a repeat answered from its first call records
// nothing.

const s = useServer();
const verify = verifierOf(s);
const MINUTES_5 = 300_000;

/** A reservation of `reserve` on a key of balance `remaining`, made at the clock's time. */
async function reservation(remaining: number, reserve: number) {
  const key = await s.seed.key({ credits: { remaining } });
  const data = await verify({ key: key.key, credits: { reserve: BigInt(reserve) } }, s.rootKey);
  expect(data.code).toBe(VerifyKeyCode.VALID);
  return { ...key, reservationId: data.reservationId as string };
}

const settle = (reservationId: string, used: number) =>
  s.api.keys.settleCredits({ reservationId, used: BigInt(used) }).then((r) => r.data);

/** The rows of the ledger of one subject: what a repeat must not add to. */
async function entriesOf(subjectId: string): Promise<number> {
  const rows = await s.db.query<{ n: number }>(
    "select count(*)::int as n from credit_ledger where subject_id = $1",
    [subjectId],
  );
  return rows[0]?.n ?? 0;
}

describe("a credit statement of reservations and settlements", () => {
  it.each([
    ["below the reservation", 100, 30, 12, { reserve: 30, settle: -18, total: 12 }],
    ["equal to it", 100, 30, 30, { reserve: 30, settle: 0, total: 30 }],
    ["above it, covered", 100, 30, 45, { reserve: 30, settle: 15, total: 45 }],
    [
      "above it, short (the shortfall is not charged)",
      40,
      30,
      51,
      { reserve: 30, settle: 0, total: 30 },
    ],
  ])(
    "spends the reservation when made, and the settlement %s when settled",
    async (_, remaining, reserve, used, want) => {
      const t0 = freshMonth(s);
      // Five minutes either side of an hour, well within the reservation's 15 minutes.
      s.clock.set(t0 + HOUR - MINUTES_5);
      const r = await reservation(remaining, reserve);
      s.clock.set(t0 + HOUR + MINUTES_5);
      await settle(r.reservationId, used);
      const hours = await statementOf(s, { keyId: r.keyId }, t0, t0 + 2 * HOUR, BY_HOUR);
      expect(hours.map((b) => b.spent)).toEqual([want.reserve, want.settle]);
      expect(totals(hours).spent).toBe(want.total);
      expectBalanced(hours, remaining, await balanceOf(s, r.keyId), "key");
    },
  );

  it("gives back on the pool, and on the key without credits of its own that reserved", async () => {
    const t0 = freshMonth(s);
    const pool = await pooledIdentity(s, 50);
    const key = await s.seed.key({ externalId: pool.externalId });
    s.clock.set(t0 + HOUR - MINUTES_5);
    const data = await verify({ key: key.key, credits: { reserve: 20n } }, s.rootKey);
    s.clock.set(t0 + HOUR + MINUTES_5);
    await settle(data.reservationId as string, 5);
    const byPool = await statementOf(s, { identityId: pool.id }, t0, t0 + 2 * HOUR, BY_HOUR);
    expect(byPool.map((b) => b.spent)).toEqual([20, -15]);
    expectBalanced(byPool, 50, await poolOf(s, pool.id), "pool");
    const byKey = await statementOf(s, { keyId: key.keyId }, t0, t0 + 2 * HOUR, BY_HOUR);
    expect(byKey.map((b) => b.spent)).toEqual([20, -15]);
  });

  it("records nothing for a settlement repeated, or a reservation expired and swept", async () => {
    const t0 = freshMonth(s);
    const r = await reservation(100, 30);
    await settle(r.reservationId, 10);
    const after = await entriesOf(r.keyId);
    await settle(r.reservationId, 10);
    await settle(r.reservationId, 0);
    expect(await entriesOf(r.keyId)).toBe(after);
    const swept = await reservation(100, 30);
    s.clock.advance(DAY);
    expect((await sweepReservations(s.db, s.clock.now())).settled).toBeGreaterThan(0);
    const t = totals(await statementOf(s, { keyId: swept.keyId }, t0, t0 + 2 * DAY));
    expect(t.spent).toBe(30);
    expectBalanced(
      await statementOf(s, { keyId: r.keyId }, t0, t0 + 2 * DAY),
      100,
      await balanceOf(s, r.keyId),
      "key",
    );
  });
});

describe("a credit statement of idempotent repeats", () => {
  it("charges and records a verification once however often it is repeated", async () => {
    const t0 = freshMonth(s);
    const key = await s.seed.key({ credits: { remaining: 100 } });
    const body = { key: key.key, credits: { cost: 5n }, idempotencyKey: `v-${t0}` };
    await verify(body, s.rootKey);
    const after = await entriesOf(key.keyId);
    expect(after).toBe(1);
    await Promise.all([verify(body, s.rootKey), verify(body, s.rootKey)]);
    await verify(body, s.rootKey);
    expect(await entriesOf(key.keyId)).toBe(after);
    const day = await statementOf(s, { keyId: key.keyId }, t0, t0 + DAY);
    expect(totals(day).spent).toBe(5);
    expectBalanced(day, 100, await balanceOf(s, key.keyId), "key");
  });

  it("records a pooled verification and an updateCredits once when repeated", async () => {
    const t0 = freshMonth(s);
    const pool = await pooledIdentity(s, 100);
    const key = await s.seed.key({ externalId: pool.externalId, credits: { remaining: 50 } });
    const body = { key: key.key, credits: { cost: 4n }, idempotencyKey: `p-${t0}` };
    await verify(body, s.rootKey);
    await verify(body, s.rootKey);
    const change = {
      keyId: key.keyId,
      operation: CreditsOperation.INCREMENT,
      value: 10n,
      idempotencyKey: `u-${t0}`,
    };
    await s.api.keys.updateCredits(change);
    await s.api.keys.updateCredits(change);
    const byKey = await statementOf(s, { keyId: key.keyId }, t0, t0 + DAY);
    expect(totals(byKey)).toEqual({ spent: 4, refilled: 0, adjusted: 10 });
    expectBalanced(byKey, 50, await balanceOf(s, key.keyId), "key");
    const byPool = await statementOf(s, { identityId: pool.id }, t0, t0 + DAY);
    expect(totals(byPool)).toEqual({ spent: 4, refilled: 0, adjusted: 0 });
    expectBalanced(byPool, 100, await poolOf(s, pool.id), "pool");
  });
});
