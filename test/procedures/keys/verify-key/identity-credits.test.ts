import type { MessageInitShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { type CreditsSchema, RefillInterval } from "../../../../gen/latchkey/v2/common_pb.js";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../../harness/server.js";
import { HOUR, verifierOf } from "./calls.js";

// keys.verifyKey with an identity's credit pool: every key of the identity spends from it; a
// key with credits of its own spends from both or from neither (USAGE_EXCEEDED when either is
// short), and a refused verification gives its rate-limit tokens back. The answer reports the
// pool after the call in `identity.credits`, a number (getKey and getIdentity show the pool as a
// Credits object). The spend is decided by the database,
// never by a cached balance, and a change of the pool through updateIdentity reaches the next
// verification (it drops the cached records of the identity's keys).

const s = useServer();
const verify = verifierOf(s);
type CreditsInit = MessageInitShape<typeof CreditsSchema>;
let n = 0;

/** An identity with this pool, made through identities.createIdentity. */
async function pool(credits?: CreditsInit) {
  const externalId = `pool_${++n}_${Date.now()}`;
  const res = await s.api.identities.createIdentity({
    externalId,
    ...(credits ? { credits } : {}),
  });
  return { id: res.data?.identityId as string, externalId };
}

/** The pool as getIdentity reads it. */
const poolOf = async (identity: string) =>
  (await s.api.identities.getIdentity({ identity })).data?.credits?.remaining;

/** The key's own balance as getKey reads it. */
const ownOf = async (keyId: string) =>
  (await s.api.keys.getKey({ keyId })).data?.credits?.remaining;

describe("keys.verifyKey with an identity's credit pool", () => {
  it("charges the pool, reports it in identity.credits, and refuses once it is spent", async () => {
    const id = await pool({ remaining: 2n });
    const a = await s.seed.key({ externalId: id.externalId });
    const b = await s.seed.key({ externalId: id.externalId, apiId: a.apiId });
    const first = await verify({ key: a.key });
    expect(first).toMatchObject({ code: VerifyKeyCode.VALID });
    expect(first.credits).toBeUndefined();
    expect(first.identity?.credits).toBe(1n);
    expect((await verify({ key: b.key })).identity?.credits).toBe(0n);
    const refused = await verify({ key: a.key });
    expect(refused.code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    expect(refused.identity?.credits).toBe(0n);
    expect(await poolOf(id.id)).toBe(0n);
  });

  it("answers the pool as a number at identity.credits on the /v2 door", async () => {
    const id = await pool({ remaining: 3n });
    const k = await s.seed.key({ externalId: id.externalId });
    const got = await s.call("json", "keys.verifyKey", { key: k.key }, null);
    expect(got.status).toBe(200);
    expect(got.data.identity).toMatchObject({ externalId: id.externalId, credits: 2 });
    const none = await s.seed.key({ externalId: (await pool()).externalId });
    const free = await s.call("json", "keys.verifyKey", { key: none.key }, null);
    expect(free.data.identity).not.toHaveProperty("credits");
  });

  it("charges both the key's own credits and the pool", async () => {
    const id = await pool({ remaining: 10n });
    const k = await s.seed.key({ externalId: id.externalId, credits: { remaining: 5 } });
    const got = await verify({ key: k.key, credits: { cost: 3n } });
    expect(got).toMatchObject({ code: VerifyKeyCode.VALID, credits: 2n });
    expect(got.identity?.credits).toBe(7n);
    expect(await ownOf(k.keyId)).toBe(2n);
    expect(await poolOf(id.id)).toBe(7n);
  });

  it.each([
    ["the key's own balance", { own: 2, pool: 10n }],
    ["the pool", { own: 10, pool: 2n }],
  ])("refuses and charges neither when %s is short", async (_, c) => {
    const id = await pool({ remaining: c.pool });
    const k = await s.seed.key({ externalId: id.externalId, credits: { remaining: c.own } });
    const got = await verify({ key: k.key, credits: { cost: 3n } });
    expect(got).toMatchObject({ code: VerifyKeyCode.USAGE_EXCEEDED, credits: BigInt(c.own) });
    expect(got.identity?.credits).toBe(c.pool);
    expect(await ownOf(k.keyId)).toBe(BigInt(c.own));
    expect(await poolOf(id.id)).toBe(c.pool);
  });

  it("gives the rate-limit tokens back when the pool refuses", async () => {
    const id = await pool({ remaining: 1n });
    const k = await s.seed.key({
      externalId: id.externalId,
      ratelimits: [{ name: "reqs", limit: 5, duration: HOUR }],
    });
    expect((await verify({ key: k.key })).ratelimits[0]?.remaining).toBe(4n);
    const refused = await verify({ key: k.key });
    expect(refused.code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    expect(refused.ratelimits[0]?.remaining).toBe(4n);
    const again = await verify({ key: k.key, credits: { cost: 0n } });
    expect(again.ratelimits[0]?.remaining).toBe(3n);
  });

  it("a cost of 0 passes without spending, even on an empty pool", async () => {
    const id = await pool({ remaining: 1n });
    const k = await s.seed.key({ externalId: id.externalId });
    expect((await verify({ key: k.key })).identity?.credits).toBe(0n);
    const free = await verify({ key: k.key, credits: { cost: 0n } });
    expect(free.code).toBe(VerifyKeyCode.VALID);
    expect(free.identity?.credits).toBe(0n);
    expect(await poolOf(id.id)).toBe(0n);
  });

  it("leaves keys of an identity without credits as before", async () => {
    const id = await pool();
    const k = await s.seed.key({ externalId: id.externalId, credits: { remaining: 1 } });
    const got = await verify({ key: k.key });
    expect(got).toMatchObject({ code: VerifyKeyCode.VALID, credits: 0n });
    expect(got.identity?.externalId).toBe(id.externalId);
    expect(got.identity?.credits).toBeUndefined();
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
  });

  it("refills the pool lazily at its boundary", async () => {
    s.clock.set(Date.parse("2026-10-01T12:00:00Z"));
    const id = await pool({
      remaining: 1n,
      refill: { interval: RefillInterval.DAILY, amount: 3n },
    });
    const k = await s.seed.key({ externalId: id.externalId });
    expect((await verify({ key: k.key })).identity?.credits).toBe(0n);
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    s.clock.set(Date.parse("2026-10-02T00:00:01Z"));
    expect(await poolOf(id.id)).toBe(3n);
    const got = await verify({ key: k.key });
    expect(got.code).toBe(VerifyKeyCode.VALID);
    expect(got.identity?.credits).toBe(2n);
    expect(await poolOf(id.id)).toBe(2n);
  });

  it("the next verification sees a pool updateIdentity set, changed or removed", async () => {
    const id = await pool();
    const k = await s.seed.key({ externalId: id.externalId });
    // Cached: the record shows no pool.
    expect((await verify({ key: k.key })).identity?.credits).toBeUndefined();
    await s.api.identities.updateIdentity({ identity: id.id, credits: { remaining: 1n } });
    expect((await verify({ key: k.key })).identity?.credits).toBe(0n);
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    await s.api.identities.updateIdentity({ identity: id.id, credits: { remaining: 5n } });
    expect((await verify({ key: k.key, credits: { cost: 0n } })).identity?.credits).toBe(5n);
    const mask = create(FieldMaskSchema, { paths: ["credits"] });
    await s.api.identities.updateIdentity({ identity: id.id, updateMask: mask });
    const free = await verify({ key: k.key, credits: { cost: 7n } });
    expect(free.code).toBe(VerifyKeyCode.VALID);
    expect(free.identity?.credits).toBeUndefined();
  });

  it("shows the pool in the identity block of getKey", async () => {
    const id = await pool({ remaining: 4n });
    const k = await s.seed.key({ externalId: id.externalId });
    await verify({ key: k.key });
    const got = await s.api.keys.getKey({ keyId: k.keyId });
    expect(got.data?.identity?.credits?.remaining).toBe(3n);
  });

  it("gives exactly min(N, B) VALID of N concurrent verifications through K keys", async () => {
    const B = 25;
    const id = await pool({ remaining: BigInt(B) });
    const first = await s.seed.key({ externalId: id.externalId });
    const keys = [first];
    for (let i = 1; i < 4; i++) {
      keys.push(await s.seed.key({ externalId: id.externalId, apiId: first.apiId }));
    }
    // One key also has credits of its own, fewer than its share: both limits hold at once.
    const anonymous = s.as(null);
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        anonymous.keys.verifyKey({ key: keys[i % keys.length]?.key as string }),
      ),
    );
    const codes = answers.map((a) => a.data?.code);
    expect(codes.filter((c) => c === VerifyKeyCode.VALID)).toHaveLength(B);
    expect(codes.filter((c) => c === VerifyKeyCode.USAGE_EXCEEDED)).toHaveLength(60 - B);
    // Every VALID answer reported a distinct pool balance: B - 1 down to 0.
    const left = answers
      .filter((a) => a.data?.code === VerifyKeyCode.VALID)
      .map((a) => a.data?.identity?.credits);
    expect(new Set(left).size).toBe(B);
    expect(await poolOf(id.id)).toBe(0n);
  });

  it("concurrent verifications of a key with its own credits never overspend either", async () => {
    const id = await pool({ remaining: 20n });
    const own = await s.seed.key({ externalId: id.externalId, credits: { remaining: 5 } });
    const other = await s.seed.key({ externalId: id.externalId, apiId: own.apiId });
    const anonymous = s.as(null);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        anonymous.keys.verifyKey({ key: i % 2 === 0 ? own.key : other.key }),
      ),
    );
    const valid = answers.filter((a) => a.data?.code === VerifyKeyCode.VALID);
    const ownValid = valid.filter((a) => a.data?.keyId === own.keyId).length;
    // The pool covers 20 and the other key alone asks for 20: exactly 20 pass, whichever
    // keys they come through, and the key with its own credits never passes more than 5.
    expect(valid).toHaveLength(20);
    expect(ownValid).toBeLessThanOrEqual(5);
    expect(await ownOf(own.keyId)).toBe(BigInt(5 - ownValid));
    expect(await poolOf(id.id)).toBe(0n);
  });

  it("concurrent verifications of a key with fewer credits than the pool stop at the key's", async () => {
    const id = await pool({ remaining: 100n });
    const k = await s.seed.key({ externalId: id.externalId, credits: { remaining: 5 } });
    const anonymous = s.as(null);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => anonymous.keys.verifyKey({ key: k.key })),
    );
    expect(answers.filter((a) => a.data?.code === VerifyKeyCode.VALID)).toHaveLength(5);
    expect(await ownOf(k.keyId)).toBe(0n);
    expect(await poolOf(id.id)).toBe(95n);
  });
});
