import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { currentEngine } from "../../../harness/engine.js";
import { type NodeProcess, startNodes } from "../../../harness/processes.js";
import { useServer } from "../../../harness/server.js";
import type { Api } from "../../../harness/typed.js";
import { typedApiAt, verifyWith } from "../verify-key/calls.js";

// Reservations on several Latchkey processes sharing one PostgreSQL database: reserves through
// both never hold more than the balance has, settles of one reservation racing on both move
// the balance once and answer alike, and both processes' sweeps (a TTL of 1 s on their own
// clocks) settle expired reservations in full, each once.

/** A bound on the poll for the processes' sweeps, which run every second here. */
const SWEEP_DEADLINE_MS = 30_000;

describe.skipIf(currentEngine() !== "postgres")("credit reservations across processes", () => {
  const s = useServer();
  let nodes: NodeProcess[] = [];
  let a: Api;
  let b: Api;
  beforeAll(async () => {
    nodes = await startNodes(2, {
      databaseUrl: s.databaseUrl as string,
      rootKey: s.rootKey,
      env: { RESERVATION_TTL_S: "1" },
    });
    a = typedApiAt((nodes[0] as NodeProcess).url, s.rootKey);
    b = typedApiAt((nodes[1] as NodeProcess).url, s.rootKey);
  });
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  });

  const stored = async (keyId: string) =>
    (
      await s.db.query<{ remaining: number }>("select remaining from keys where id = $1", [keyId])
    )[0]?.remaining;

  it("holds exactly what the balance covers through both processes", async () => {
    const k = await s.seed.key({ credits: { remaining: 100 } });
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        verifyWith(i % 2 ? a : b, { key: k.key, credits: { reserve: 3n } }),
      ),
    );
    expect(answers.filter((x) => x.code === VerifyKeyCode.VALID)).toHaveLength(33);
    expect(await stored(k.keyId)).toBe(1);
  });

  it("moves the balance once when both processes settle one reservation", async () => {
    const k = await s.seed.key({ credits: { remaining: 1000 } });
    let expected = 1000;
    for (let i = 0; i < 10; i++) {
      // Made by the test's own server, whose clock never expires it here.
      const r = await verifyWith(s.api, { key: k.key, credits: { reserve: 20n } });
      const reservationId = r.reservationId as string;
      const [onA, onB] = await Promise.all([
        a.keys.settleCredits({ reservationId, used: 5n }),
        b.keys.settleCredits({ reservationId, used: 15n }),
      ]);
      expect(onA.data).toEqual(onB.data);
      const used = Number(onA.data?.used);
      // A process may find it expired (its TTL is 1 s): then all 20 stay charged.
      expect([5, 15, 20]).toContain(used);
      expected -= used;
      expect(await stored(k.keyId)).toBe(expected);
    }
  });

  it("settles expired reservations in full with the sweeps of both processes", async () => {
    const k = await s.seed.key({ credits: { remaining: 100 } });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await verifyWith(i % 2 ? a : b, { key: k.key, credits: { reserve: 2n } });
      ids.push(r.reservationId as string);
    }
    const unsettled = async () =>
      (
        await s.db.query<{ n: number }>(
          "select count(*)::int as n from credit_reservations where id = any($1::text[]) and settled_at is null",
          [ids],
        )
      )[0]?.n;
    const deadline = Date.now() + SWEEP_DEADLINE_MS;
    while ((await unsettled()) !== 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    expect(await unsettled()).toBe(0);
    const rows = await s.db.query<{ used: number; refunded: number; expired: boolean }>(
      "select used, refunded, expired from credit_reservations where id = any($1::text[])",
      [ids],
    );
    expect(rows.every((r) => r.used === 2 && r.refunded === 0 && r.expired)).toBe(true);
    expect(await stored(k.keyId)).toBe(60);
  });
});
