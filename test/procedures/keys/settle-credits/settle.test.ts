import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { sweepReservations } from "../../../../src/services/keys/reservation-sweep.js";
import { useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";
import { verifierOf } from "../verify-key/calls.js";

// keys.verifyKey with credits.reserve holds credits like a cost of that amount, and
// keys.settleCredits charges what was used: the rest goes back, an extra is charged only when
// every balance the reservation drew on covers it (else it is the shortfall), a repeat answers
// the same and moves nothing, and a reservation not settled within RESERVATION_TTL_S is settled
// in full.

const s = useServer();
const verify = verifierOf(s);
const TTL_MS = 900_000;

const balanceOf = async (keyId: string) =>
  (await s.api.keys.getKey({ keyId })).data?.credits?.remaining;
const poolOf = async (identity: string) =>
  (await s.api.identities.getIdentity({ identity })).data?.credits?.remaining;

/**
 * The tables that changed since `before`, not counting a key row whose only change is its
 * last_used_at: the event writer moves that in the background for any verification, the
 * earlier tests' too, whenever its timer fires.
 */
async function changedTables(before: Awaited<ReturnType<typeof s.snapshot>>): Promise<string[]> {
  const changes = await s.changesSince(before);
  const keys = changes.keys;
  if (keys) {
    const rows = (list: unknown[]) =>
      new Set(list.map((r) => JSON.stringify({ ...(r as object), last_used_at: null })));
    const added = rows(keys.added);
    const removed = rows(keys.removed);
    const same = added.size === removed.size && [...added].every((r) => removed.has(r));
    if (same) delete changes.keys;
  }
  return Object.keys(changes);
}

/** A key with this balance, and a reservation of `reserve` on it (VALID, with its id). */
async function reserved(remaining: bigint, reserve: bigint) {
  const key = await s.seed.key({ credits: { remaining: Number(remaining) } });
  const data = await verify({ key: key.key, credits: { reserve } }, s.rootKey);
  expect(data.code).toBe(VerifyKeyCode.VALID);
  expect(data.reservationId).toMatch(/^res_[a-zA-Z0-9]{16}$/);
  return { ...key, reservationId: data.reservationId as string, answer: data };
}

const settle = (reservationId: string, used: bigint) =>
  s.api.keys.settleCredits({ reservationId, used }).then((r) => r.data);

describe("keys.verifyKey with credits.reserve", () => {
  it("charges the amount now, like a cost, and answers a reservationId", async () => {
    const r = await reserved(100n, 30n);
    expect(r.answer.credits).toBe(70n);
    expect(await balanceOf(r.keyId)).toBe(70n);
  });

  it("answers USAGE_EXCEEDED when the balance does not cover it, and holds nothing", async () => {
    const key = await s.seed.key({ credits: { remaining: 5 } });
    const before = await s.snapshot();
    const data = await verify({ key: key.key, credits: { reserve: 6n } }, s.rootKey);
    expect(data.code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    expect(data.reservationId).toBeUndefined();
    expect(data.credits).toBe(5n);
    // Nothing held or charged (the verification's event and its rollups are written, as for any).
    const changes = await changedTables(before);
    expect(changes).not.toContain("keys");
    expect(changes).not.toContain("credit_reservations");
    expect(changes).not.toContain("credit_ledger");
  });

  it("reserves on an unlimited key too: nothing is held and the settlement moves nothing", async () => {
    const key = await s.seed.key();
    const data = await verify({ key: key.key, credits: { reserve: 10n } }, s.rootKey);
    expect(data.code).toBe(VerifyKeyCode.VALID);
    const settled = await settle(data.reservationId as string, 3n);
    expect(settled).toMatchObject({ reserved: 10n, used: 3n, refunded: 7n, shortfall: 0n });
    expect(settled?.remaining).toBeUndefined();
    expect(await balanceOf(key.keyId)).toBeUndefined();
  });
});

describe("keys.settleCredits", () => {
  it("gives back what was not used", async () => {
    const r = await reserved(100n, 30n);
    expect(await settle(r.reservationId, 12n)).toMatchObject({
      reservationId: r.reservationId,
      reserved: 30n,
      used: 12n,
      refunded: 18n,
      shortfall: 0n,
      remaining: 88n,
      expired: false,
    });
    expect(await balanceOf(r.keyId)).toBe(88n);
  });

  it("keeps the amount when exactly that was used", async () => {
    const r = await reserved(100n, 30n);
    expect(await settle(r.reservationId, 30n)).toMatchObject({
      used: 30n,
      refunded: 0n,
      shortfall: 0n,
      remaining: 70n,
    });
    expect(await balanceOf(r.keyId)).toBe(70n);
  });

  it("charges an extra the balance covers", async () => {
    const r = await reserved(100n, 30n);
    expect(await settle(r.reservationId, 45n)).toMatchObject({
      used: 45n,
      refunded: 0n,
      shortfall: 0n,
      remaining: 55n,
    });
    expect(await balanceOf(r.keyId)).toBe(55n);
  });

  it("charges none of an extra the balance does not cover, and reports it as shortfall", async () => {
    const r = await reserved(40n, 30n);
    expect(await settle(r.reservationId, 51n)).toMatchObject({
      used: 30n,
      refunded: 0n,
      shortfall: 21n,
      remaining: 10n,
    });
    expect(await balanceOf(r.keyId)).toBe(10n);
  });

  it("charges an extra of exactly the balance left", async () => {
    const r = await reserved(40n, 30n);
    expect(await settle(r.reservationId, 40n)).toMatchObject({ used: 40n, shortfall: 0n });
    expect(await balanceOf(r.keyId)).toBe(0n);
  });

  it("answers a second settlement the same and moves nothing, whatever its used", async () => {
    const r = await reserved(100n, 30n);
    const first = await settle(r.reservationId, 10n);
    expect(await settle(r.reservationId, 10n)).toEqual(first);
    expect(await settle(r.reservationId, 0n)).toEqual(first);
    expect(await balanceOf(r.keyId)).toBe(90n);
  });

  it("settles a reservation on a key and its identity pool on both", async () => {
    const externalId = `pool_${Date.now()}`;
    await s.api.identities.createIdentity({ externalId, credits: { remaining: 50n } });
    const key = await s.seed.key({ externalId, credits: { remaining: 100 } });
    const data = await verify({ key: key.key, credits: { reserve: 20n } }, s.rootKey);
    expect(data).toMatchObject({ code: VerifyKeyCode.VALID, credits: 80n });
    expect(data.identity?.credits).toBe(30n);
    expect(await poolOf(externalId)).toBe(30n);
    expect(await settle(data.reservationId as string, 5n)).toMatchObject({
      used: 5n,
      refunded: 15n,
      remaining: 95n,
      identityRemaining: 45n,
    });
    expect(await balanceOf(key.keyId)).toBe(95n);
    expect(await poolOf(externalId)).toBe(45n);
  });

  it("charges an extra on neither balance when the pool does not cover it", async () => {
    const externalId = `pool_short_${Date.now()}`;
    await s.api.identities.createIdentity({ externalId, credits: { remaining: 25n } });
    const key = await s.seed.key({ externalId, credits: { remaining: 100 } });
    const data = await verify({ key: key.key, credits: { reserve: 20n } }, s.rootKey);
    expect(await settle(data.reservationId as string, 30n)).toMatchObject({
      used: 20n,
      shortfall: 10n,
      remaining: 80n,
      identityRemaining: 5n,
    });
    expect(await balanceOf(key.keyId)).toBe(80n);
    expect(await poolOf(externalId)).toBe(5n);
  });

  it("gives back to the key a reroll moved the balance to", async () => {
    const r = await reserved(100n, 30n);
    const { data } = await s.api.keys.rerollKey({ keyId: r.keyId, expiration: 60_000n });
    const successor = data?.keyId as string;
    expect(await settle(r.reservationId, 10n)).toMatchObject({ refunded: 20n, remaining: 90n });
    expect(await balanceOf(successor)).toBe(90n);
  });

  it("needs used on the /v2 door, where an omitted number can be told from 0", async () => {
    const r = await reserved(10n, 5n);
    const res = await s.call("json", "keys.settleCredits", { reservationId: r.reservationId });
    expect(res.status).toBe(400);
    expect(res.error?.errors?.map((e: { location: string }) => e.location)).toEqual(["/used"]);
    expect(await balanceOf(r.keyId)).toBe(5n);
  });

  it("answers an unknown reservation, or another workspace's, with 404", async () => {
    const unknown = await refusal(
      s.api.keys.settleCredits({ reservationId: "res_0000000000000000", used: 1n }),
    );
    expect(unknown.status).toBe(404);
    expect(unknown.errorCode).toBe("err:svc:data:reservation_not_found");
    const r = await reserved(10n, 5n);
    const other = await s.seed.rootKey(["*.*.*"], await s.seed.workspace());
    const before = await s.snapshot();
    const foreign = await refusal(
      s.as(other).keys.settleCredits({ reservationId: r.reservationId, used: 0n }),
    );
    expect(foreign.status).toBe(404);
    // Nothing settled or moved (earlier verifications' events may be written meanwhile).
    const changes = await changedTables(before);
    for (const table of ["keys", "credit_reservations", "credit_ledger", "audit_logs"]) {
      expect(changes).not.toContain(table);
    }
    expect(await balanceOf(r.keyId)).toBe(5n);
  });

  it("needs verify_key on the key's API", async () => {
    const r = await reserved(10n, 5n);
    const reader = await s.seed.rootKey([`api.${r.apiId}.read_key`]);
    const refused = await refusal(
      s.as(reader).keys.settleCredits({ reservationId: r.reservationId, used: 0n }),
    );
    expect(refused.status).toBe(403);
    const verifier = await s.seed.rootKey([`api.${r.apiId}.verify_key`]);
    const { data } = await s
      .as(verifier)
      .keys.settleCredits({ reservationId: r.reservationId, used: 0n });
    expect(data).toMatchObject({ refunded: 5n, remaining: 10n });
  });

  it("answers bad input with 400 naming the field", async () => {
    const key = await s.seed.key({ credits: { remaining: 10 } });
    const cases = [
      [{ reservationId: "nope", used: 1n }, "/reservationId"],
      [{ reservationId: "res_0000000000000000", used: -1n }, "/used"],
      [{ reservationId: "res_0000000000000000", used: 1_000_000_000_001n }, "/used"],
    ] as const;
    for (const [body, location] of cases) {
      const r = await refusal(s.api.keys.settleCredits(body));
      expect(r.status, location).toBe(400);
      expect(r.errors.map((e) => e.location)).toEqual([location]);
    }
    for (const reserve of [0n, -1n, 1_000_000_000_001n]) {
      const r = await refusal(s.api.keys.verifyKey({ key: key.key, credits: { reserve } }));
      expect(r.status, String(reserve)).toBe(400);
      expect(r.errors.map((e) => e.location)).toEqual(["/credits/reserve"]);
    }
    expect(await balanceOf(key.keyId)).toBe(10n);
  });
});

describe("an unsettled reservation after RESERVATION_TTL_S", () => {
  it("is settled in full by a settle that comes too late: nothing goes back", async () => {
    const r = await reserved(100n, 30n);
    s.clock.advance(TTL_MS);
    expect(await settle(r.reservationId, 0n)).toMatchObject({
      used: 30n,
      refunded: 0n,
      shortfall: 0n,
      remaining: 70n,
      expired: true,
    });
    expect(await balanceOf(r.keyId)).toBe(70n);
  });

  it("is settled in full by the sweep, and a later settle answers that", async () => {
    const r = await reserved(100n, 30n);
    const early = await reserved(100n, 10n);
    s.clock.advance(TTL_MS - 1);
    const fresh = await reserved(100n, 10n);
    s.clock.advance(1);
    await sweepReservations(s.db, s.clock.now());
    const rows = await s.db.query<{ id: string; expired: boolean | null }>(
      "select id, expired from credit_reservations where id = any($1::text[])",
      [[r.reservationId, early.reservationId, fresh.reservationId]],
    );
    const byId = new Map(rows.map((row) => [row.id, row.expired]));
    expect(byId.get(r.reservationId)).toBe(true);
    expect(byId.get(early.reservationId)).toBe(true);
    expect(byId.get(fresh.reservationId)).toBeNull();
    expect(await settle(r.reservationId, 0n)).toMatchObject({ used: 30n, expired: true });
    expect(await settle(fresh.reservationId, 0n)).toMatchObject({ refunded: 10n, expired: false });
    expect(await balanceOf(r.keyId)).toBe(70n);
  });
});

describe("credits.reserve with an idempotencyKey", () => {
  it("answers the repeat with the same reservationId and holds nothing more", async () => {
    const key = await s.seed.key({ credits: { remaining: 100 } });
    const body = {
      key: key.key,
      credits: { reserve: 25n },
      idempotencyKey: `reserve-${key.keyId}`,
    };
    const first = await verify(body, s.rootKey);
    const again = await verify(body, s.rootKey);
    expect(again.reservationId).toBe(first.reservationId);
    expect(again.credits).toBe(75n);
    expect(await balanceOf(key.keyId)).toBe(75n);
    const rows = await s.db.query("select id from credit_reservations where key_id = $1", [
      key.keyId,
    ]);
    expect(rows).toHaveLength(1);
  });
});
