import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { currentEngine } from "../../../harness/engine.js";
import { useServer } from "../../../harness/server.js";
import { verifyWith } from "../verify-key/calls.js";

// Reservations under concurrency on PostgreSQL (PGlite has one connection): reserves on one
// balance never hold more than it has, settles racing on one reservation move the balance
// once and answer alike, and reserves and settles of a key and its pool interleaved leave
// exactly the balance their answers account for.

describe.skipIf(currentEngine() !== "postgres")("credit reservations under concurrency", () => {
  const s = useServer();

  const stored = async (keyId: string) =>
    (
      await s.db.query<{ remaining: number }>("select remaining from keys where id = $1", [keyId])
    )[0]?.remaining;
  const pool = async (identityId: string) =>
    (
      await s.db.query<{ remaining: number }>("select remaining from identities where id = $1", [
        identityId,
      ])
    )[0]?.remaining;
  const held = async (keyId: string) =>
    (
      await s.db.query<{ n: number; total: number }>(
        "select count(*)::int as n, coalesce(sum(amount), 0)::int as total from credit_reservations where key_id = $1",
        [keyId],
      )
    )[0];

  it("holds exactly what the balance covers: 71 of 200 reserves of 7 on 500", async () => {
    const k = await s.seed.key({ credits: { remaining: 500 } });
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        verifyWith(s.api, { key: k.key, credits: { reserve: 7n } }),
      ),
    );
    const valid = answers.filter((a) => a.code === VerifyKeyCode.VALID);
    expect(valid.length).toBe(71);
    expect(answers.length - valid.length).toBe(129);
    expect(answers.filter((a) => a.code === VerifyKeyCode.USAGE_EXCEEDED)).toHaveLength(129);
    expect(new Set(valid.map((a) => a.reservationId)).size).toBe(71);
    expect(await stored(k.keyId)).toBe(3);
    expect(await held(k.keyId)).toEqual({ n: 71, total: 497 });
  });

  it("holds exactly what an identity pool covers, through several keys", async () => {
    const externalId = `race_pool_${Date.now()}`;
    const identity = await s.api.identities.createIdentity({
      externalId,
      credits: { remaining: 100n },
    });
    const identityId = identity.data?.identityId as string;
    const a = await s.seed.key({ externalId, credits: { remaining: 60 } });
    const b = await s.seed.key({ externalId, apiId: a.apiId });
    const answers = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        verifyWith(s.api, { key: (i % 2 ? a : b).key, credits: { reserve: 3n } }),
      ),
    );
    const validA = answers.filter((x, i) => i % 2 && x.code === VerifyKeyCode.VALID).length;
    const valid = answers.filter((x) => x.code === VerifyKeyCode.VALID).length;
    // The pool covers 33 reserves of 3; key a's own 60 cover 20 of its share.
    expect(valid).toBe(33);
    expect(validA).toBeLessThanOrEqual(20);
    expect(await pool(identityId)).toBe(1);
    expect(await stored(a.keyId)).toBe(60 - 3 * validA);
  });

  it("moves the balance once when settles of one reservation race", async () => {
    const k = await s.seed.key({ credits: { remaining: 100 } });
    const r = await verifyWith(s.api, { key: k.key, credits: { reserve: 40n } });
    const reservationId = r.reservationId as string;
    const useds = Array.from({ length: 12 }, (_, i) => BigInt(i * 5));
    const answers = await Promise.all(
      useds.map((used) => s.api.keys.settleCredits({ reservationId, used }).then((x) => x.data)),
    );
    const first = answers[0];
    for (const a of answers) expect(a).toEqual(first);
    const used = Number(first?.used);
    expect(await stored(k.keyId)).toBe(100 - used);
    expect(first?.remaining).toBe(BigInt(100 - used));
    const audits = await s.db.query("select 1 from audit_logs where description like $1", [
      `Settled reservation ${reservationId}%`,
    ]);
    expect(audits).toHaveLength(1);
  });

  it("accounts exactly for reserves and settles of a key and its pool interleaved", async () => {
    const externalId = `mixed_pool_${Date.now()}`;
    const identity = await s.api.identities.createIdentity({
      externalId,
      credits: { remaining: 1000n },
    });
    const identityId = identity.data?.identityId as string;
    const k = await s.seed.key({ externalId, credits: { remaining: 800 } });
    const reserve = (n: number) =>
      verifyWith(s.api, { key: k.key, credits: { reserve: BigInt(n) } });
    const first = await Promise.all(Array.from({ length: 20 }, (_, i) => reserve(5 + (i % 4))));
    // Settle those while more reserves arrive; each settles to a used of its own.
    const settles = first.map((a, i) =>
      s.api.keys
        .settleCredits({ reservationId: a.reservationId as string, used: BigInt(i % 11) })
        .then((x) => x.data),
    );
    const more = Array.from({ length: 20 }, () => reserve(4));
    const [settled, reserved] = await Promise.all([Promise.all(settles), Promise.all(more)]);
    const charged =
      settled.reduce((sum, x) => sum + Number(x?.used), 0) +
      reserved.reduce((sum, x) => sum + (x.code === VerifyKeyCode.VALID ? 4 : 0), 0);
    expect(settled.every((x) => x?.shortfall === 0n)).toBe(true);
    expect(await stored(k.keyId)).toBe(800 - charged);
    expect(await pool(identityId)).toBe(1000 - charged);
  });
});
