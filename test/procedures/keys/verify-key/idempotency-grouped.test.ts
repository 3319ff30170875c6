import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import type { SpendResult } from "../../../../src/storage/credit-spender.js";
import { useServer } from "../../../harness/server.js";
import { HOUR, type VerifyRequest, verifyWith } from "./calls.js";

// Idempotent verifications with credits join the grouped spends of their key (or identity
// pool): each batch claims its members' keys, spends for those it holds and stores their
// answers in one transaction. Whatever the grouping, every distinct key is charged once and
// the balance is exact; repeats of one key racing inside a batch or across batches charge
// once and all answer the first outcome.

const s = useServer();
let n = 0;
/** A fresh idempotency key. */
const idem = () => `grouped-${++n}-${Date.now()}`;
const verify = (req: VerifyRequest) => verifyWith(s.api, req);
const stored = async (keyId: string) =>
  (await s.db.query<{ remaining: number }>("select remaining from keys where id = $1", [keyId]))[0]
    ?.remaining;
const records = async (prefix: string) =>
  (
    await s.db.query<{ n: number }>(
      "select count(*)::int as n from idempotency_records where idempotency_key like $1 and answer is not null",
      [`${prefix}%`],
    )
  )[0]?.n;
const verifications = async (keyId: string) => {
  await s.app.deps.events.flush();
  const rows = await s.db.query<{ n: number }>(
    "select count(*)::int as n from key_verifications where key_id = $1",
    [keyId],
  );
  return rows[0]?.n ?? 0;
};
const count = (answers: { code: VerifyKeyCode }[], code: VerifyKeyCode) =>
  answers.filter((a) => a.code === code).length;

describe("idempotent verifications grouped with their key's spends", () => {
  it("charges each of many concurrent distinct keys once, exactly, on one key", async () => {
    const k = await s.seed.key({
      credits: { remaining: 40 },
      ratelimits: [{ name: "hour", limit: 1000, duration: HOUR, autoApply: true }],
    });
    const prefix = idem();
    const bodies = Array.from({ length: 60 }, (_, i) => ({
      key: k.key,
      idempotencyKey: `${prefix}-${i}`,
    }));
    const first = await Promise.all(bodies.map(verify));
    expect(count(first, VerifyKeyCode.VALID)).toBe(40);
    expect(count(first, VerifyKeyCode.USAGE_EXCEEDED)).toBe(20);
    expect(await stored(k.keyId)).toBe(0);
    expect(await records(prefix)).toBe(60);
    // Every repeat answers its first outcome and charges nothing: no credits, tokens, events.
    const again = await Promise.all(bodies.map(verify));
    expect(again).toEqual(first);
    expect(await stored(k.keyId)).toBe(0);
    expect(await verifications(k.keyId)).toBe(60);
    // The refused ones gave their tokens back: 40 taken, the plain one below the 41st.
    const plain = await verify({ key: k.key, credits: { cost: 0n } });
    expect(plain.ratelimits[0]?.remaining).toBe(1000n - 41n);
  });

  it("charges each of many concurrent distinct keys once, exactly, on one identity pool", async () => {
    const externalId = `grouped_pool_${Date.now()}`;
    await s.api.identities.createIdentity({ externalId, credits: { remaining: 50n } });
    const keys = await Promise.all([0, 1, 2].map(() => s.seed.key({ externalId })));
    const prefix = idem();
    const bodies = Array.from({ length: 75 }, (_, i) => ({
      key: (keys[i % 3] as (typeof keys)[number]).key,
      idempotencyKey: `${prefix}-${i}`,
    }));
    const first = await Promise.all(bodies.map(verify));
    expect(count(first, VerifyKeyCode.VALID)).toBe(50);
    expect(count(first, VerifyKeyCode.USAGE_EXCEEDED)).toBe(25);
    const pool = async () =>
      (await s.api.identities.getIdentity({ identity: externalId })).data?.credits?.remaining;
    expect(await pool()).toBe(0n);
    expect(await Promise.all(bodies.map(verify))).toEqual(first);
    expect(await pool()).toBe(0n);
    expect(await records(prefix)).toBe(75);
  });

  it("charges once for repeats of one key racing among distinct ones, in and across batches", async () => {
    const k = await s.seed.key({
      credits: { remaining: 1000 },
      ratelimits: [{ name: "hour", limit: 1000, duration: HOUR, autoApply: true }],
    });
    const shared = idem();
    const prefix = idem();
    const body = { key: k.key, credits: { cost: 7n }, idempotencyKey: shared };
    // Three waves of ten repeats among ten distinct keys: the repeats meet in one batch and
    // in different ones, and later waves find the first answer committed.
    const waves: Awaited<ReturnType<typeof verify>>[][] = [];
    for (let w = 0; w < 3; w++) {
      const distinct = Array.from({ length: 10 }, (_, i) =>
        verify({ key: k.key, credits: { cost: 1n }, idempotencyKey: `${prefix}-${w}-${i}` }),
      );
      const repeats = Array.from({ length: 10 }, () => verify(body));
      waves.push(await Promise.all([...repeats, ...distinct]));
    }
    const sharedAnswers = waves.flatMap((w) => w.slice(0, 10));
    expect(new Set(sharedAnswers.map((a) => JSON.stringify(a, jsonBigInt))).size).toBe(1);
    expect(sharedAnswers[0]?.code).toBe(VerifyKeyCode.VALID);
    // Charged: the shared key once (7), the 30 distinct ones once each.
    expect(await stored(k.keyId)).toBe(1000 - 7 - 30);
    const plain = await verify({ key: k.key, credits: { cost: 0n } });
    expect(plain.ratelimits[0]?.remaining).toBe(1000n - 31n - 1n);
    expect(await verifications(k.keyId)).toBe(32);
  });

  it("spends for the first of a key in one batch only, the others of the batch lose", async () => {
    const k = await s.seed.key({ credits: { remaining: 100 } });
    const [row] = await s.db.query<{ workspaceId: string }>(
      `select workspace_id as "workspaceId" from keys where id = $1`,
      [k.keyId],
    );
    const workspaceId = row?.workspaceId as string;
    const claim = (key: string) => ({
      workspaceId,
      key,
      requestHash: "h",
      now: s.app.deps.clock.now(),
    });
    const spendOnce = (key: string) =>
      s.app.deps.credits.spendOnce(k.keyId, {
        keyId: k.keyId,
        cost: 1,
        claim: claim(key),
        answerOf: (r: SpendResult) => JSON.stringify(r),
      });
    const [a, b] = [idem(), idem()];
    // The first call goes alone; the five after it wait and go together as one batch.
    const results = await Promise.all([a, a, b, a, b, b].map(spendOnce));
    expect(results.map((r) => r !== undefined)).toEqual([true, false, true, false, false, false]);
    expect(await stored(k.keyId)).toBe(98);
    // A later batch finds both keys held by committed records: nothing spent.
    expect(await Promise.all([a, b].map(spendOnce))).toEqual([undefined, undefined]);
    expect(await stored(k.keyId)).toBe(98);
  });
});

/** JSON.stringify replacer for answers holding bigints. */
function jsonBigInt(_: string, v: unknown) {
  return typeof v === "bigint" ? v.toString() : v;
}
