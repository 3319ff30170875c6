import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { newId } from "../../../../src/domain/ids.js";
import {
  SETTLED_KEPT_MS,
  SWEEP_BATCH,
  sweepReservations,
} from "../../../../src/services/keys/reservation-sweep.js";
import { reservationInsert } from "../../../../src/storage/queries/reservations.js";
import { currentEngine } from "../../../harness/engine.js";
import { useServer } from "../../../harness/server.js";
import { verifyWith } from "../verify-key/calls.js";

// The sweep that settles reservations left unsettled for RESERVATION_TTL_S: the server's own
// timer does it (a TTL of 1 s here, polled with a deadline, the test clock moved past it),
// a pass is bounded, passes racing on one PostgreSQL database settle each row once, and
// settlements are deleted a day later.

const s = useServer({ config: { reservationTtlS: 1 } });
/** A bound on the poll for the server's sweep, which runs every second here. */
const SWEEP_DEADLINE_MS = 30_000;

const unsettled = async (ids: string[]) =>
  (
    await s.db.query<{ n: number }>(
      "select count(*)::int as n from credit_reservations where id = any($1::text[]) and settled_at is null",
      [ids],
    )
  )[0]?.n;

async function reserveMany(n: number, amount = 1): Promise<{ keyId: string; ids: string[] }> {
  const k = await s.seed.key({ credits: { remaining: n * amount } });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = await verifyWith(s.api, { key: k.key, credits: { reserve: BigInt(amount) } });
    expect(a.code).toBe(VerifyKeyCode.VALID);
    ids.push(a.reservationId as string);
  }
  return { keyId: k.keyId, ids };
}

describe("the reservation sweep", () => {
  it("settles an expired reservation in full on the server's own timer", async () => {
    const { keyId, ids } = await reserveMany(2, 5);
    s.clock.advance(1_000);
    const deadline = Date.now() + SWEEP_DEADLINE_MS;
    while ((await unsettled(ids)) !== 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    expect(await unsettled(ids)).toBe(0);
    const settled = await s.api.keys.settleCredits({ reservationId: ids[0] as string, used: 0n });
    expect(settled.data).toMatchObject({ used: 5n, refunded: 0n, expired: true, remaining: 0n });
    expect((await s.api.keys.getKey({ keyId })).data?.credits?.remaining).toBe(0n);
  });

  it("settles at most one batch per pass, and deletes settlements a day old", async () => {
    // More than a pass takes, stored as a verification stores them (one by one would be slow).
    const k = await s.seed.key({ credits: { remaining: 10 } });
    const ids = Array.from({ length: SWEEP_BATCH + 5 }, () => newId("res"));
    for (const id of ids) {
      await reservationInsert(s.db, {
        id,
        workspaceId: s.workspaceId,
        apiId: k.apiId,
        keyId: k.keyId,
        keyCharged: true,
        identityId: null,
        amount: 1,
        createdAt: s.clock.now(),
        expiresAt: s.clock.now() + 1_000,
      });
    }
    s.clock.advance(1_000);
    // The server's timer may run passes too: together they settle each row once.
    while ((await unsettled(ids)) !== 0) {
      const r = await sweepReservations(s.db, s.clock.now());
      expect(r.settled).toBeLessThanOrEqual(SWEEP_BATCH);
    }
    s.clock.advance(SETTLED_KEPT_MS);
    for (let i = 0; i < 3; i++) {
      expect((await sweepReservations(s.db, s.clock.now())).deleted).toBeLessThanOrEqual(
        SWEEP_BATCH,
      );
    }
    const left = await s.db.query("select 1 from credit_reservations where id = any($1::text[])", [
      ids,
    ]);
    expect(left).toHaveLength(0);
  });

  it.skipIf(currentEngine() !== "postgres")(
    "settles each row once when passes race on one database",
    async () => {
      const { ids } = await reserveMany(150);
      s.clock.advance(1_000);
      const now = s.clock.now();
      const results = await Promise.all(
        Array.from({ length: 4 }, () => sweepReservations(s.db, now)),
      );
      // Rows the server's own timer took are settled too; none is settled twice.
      expect(results.reduce((n, r) => n + r.settled, 0)).toBeLessThanOrEqual(ids.length);
      expect(await unsettled(ids)).toBe(0);
      const expired = await s.db.query<{ n: number }>(
        "select count(*)::int as n from credit_reservations where id = any($1::text[]) and expired",
        [ids],
      );
      expect(expired[0]?.n).toBe(ids.length);
    },
  );
});
