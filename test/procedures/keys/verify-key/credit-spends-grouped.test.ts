import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { spendInOrder } from "../../../../src/domain/credits.js";
import { useServer } from "../../../harness/server.js";
import { HOUR } from "./calls.js";

// The credit spender behind keys.verifyKey: spends of one key that arrive while a statement
// for it is in flight are grouped into one statement. Grouped or not, the answers must be
// those of the spends made one after the other in arrival order: here the first spend goes
// alone and the rest wait and go together.

const s = useServer();
const spendAll = (keyId: string, costs: readonly number[]) =>
  Promise.all(costs.map((cost) => s.app.deps.credits.spend(keyId, cost)));
const remainingInDb = async (keyId: string) =>
  (await s.db.query<{ remaining: number }>("select remaining from keys where id = $1", [keyId]))[0]
    ?.remaining;

/** The id of the key's successor through keys.rerollKey. */
const reroll = async (keyId: string) =>
  (await s.api.keys.rerollKey({ keyId, expiration: BigInt(HOUR) })).data?.keyId as string;

describe("credit spends of one key, grouped", () => {
  it("takes a later, smaller cost that the balance covers after a larger one is refused", async () => {
    const k = await s.seed.key({ credits: { remaining: 4 } });
    expect(await spendAll(k.keyId, [1, 5, 1, 3, 1])).toEqual([
      { status: "spent", remaining: 3 },
      { status: "insufficient", remaining: 3 },
      { status: "spent", remaining: 2 },
      { status: "insufficient", remaining: 2 },
      { status: "spent", remaining: 1 },
    ]);
    expect(await remainingInDb(k.keyId)).toBe(1);
  });

  it("answers every spend as spendInOrder does, and stores its last balance", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.integer({ min: 1, max: 15 }), { minLength: 1, maxLength: 12 }),
        async (balance, costs) => {
          const k = await s.seed.key({ credits: { remaining: balance } });
          const expected = spendInOrder(balance, costs);
          const answers = await spendAll(k.keyId, costs);
          expect(answers).toEqual(
            expected.map((o) => ({
              status: o.taken ? "spent" : "insufficient",
              remaining: o.remaining,
            })),
          );
          expect(await remainingInDb(k.keyId)).toBe(expected.at(-1)?.remaining);
        },
      ),
      { numRuns: 40 },
    );
  });

  // A verification names the holder its cached record knows; these make that record stale
  // the way a reroll or a permanent delete committing during the spend would.

  it("follows a balance that a reroll moved after the holder was read", async () => {
    const k0 = await s.seed.key({ credits: { remaining: 5 } });
    const k1 = await reroll(k0.keyId);
    const k2 = await reroll(k1);
    // k0's record still says k1 holds the balance; k1 now spends from k2 itself.
    expect(await s.app.deps.credits.spend(k0.keyId, 2, k1)).toEqual({
      status: "spent",
      remaining: 3,
    });
    expect(await remainingInDb(k2)).toBe(3);
    expect(await remainingInDb(k1)).toBeNull();
  });

  it("spends a key's own copy when the holder it knew was deleted for good", async () => {
    const k0 = await s.seed.key({ credits: { remaining: 5 } });
    const k1 = await reroll(k0.keyId);
    await s.api.keys.deleteKey({ keyId: k1, permanent: true });
    expect(await s.app.deps.credits.spend(k0.keyId, 2, k1)).toEqual({
      status: "spent",
      remaining: 3,
    });
    expect(await remainingInDb(k0.keyId)).toBe(3);
  });

  it("answers unlimited for a key without credits, and gone for a key deleted for good", async () => {
    const unlimited = await s.seed.key();
    expect(await spendAll(unlimited.keyId, [1, 2])).toEqual([
      { status: "unlimited" },
      { status: "unlimited" },
    ]);
    const gone = await s.seed.key({ credits: { remaining: 5 } });
    await s.api.keys.deleteKey({ keyId: gone.keyId, permanent: true });
    expect(await spendAll(gone.keyId, [1, 2])).toEqual([{ status: "gone" }, { status: "gone" }]);
  });
});
