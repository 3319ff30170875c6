import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rig } from "./rig.js";

// An idempotencyKey across three nodes sharing PostgreSQL and Redis: verifications racing with
// one key on every node charge once (credits and rate-limit tokens) and all answer the first
// outcome; a node started again answers a repeat from the stored record. Calls that lose
// their claim to another node spend nothing and give their rate-limit tokens back.

const PER_NODE = 40;
let rig: Rig;
beforeAll(async () => {
  rig = await Rig.start();
});
afterAll(() => rig?.stop());

describe("idempotency keys across three nodes", () => {
  it(`charges once for ${PER_NODE * 3} racing verifications with one key`, async () => {
    const { apiId } = await rig.ok("apis.createApi", { name: "idempotency" });
    const ratelimits = [{ name: "hour", limit: 1000, duration: 3_600_000, autoApply: true }];
    const { key, keyId } = await rig.ok("keys.createKey", {
      apiId,
      credits: { remaining: 100 },
      ratelimits,
    });
    const body = { key, credits: { cost: 4 }, idempotencyKey: "race-1" };
    const answers = await Promise.all(
      Array.from({ length: PER_NODE * 3 }, (_, i) =>
        rig.call("keys.verifyKey", body, { node: i % 3 }),
      ),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    const distinct = new Set(answers.map((a) => JSON.stringify(a.body.data)));
    expect([...distinct]).toHaveLength(1);
    expect(answers[0]?.body.data).toMatchObject({ code: "VALID", credits: 96 });
    expect((await rig.ok("keys.getKey", { keyId })).credits.remaining).toBe(96);
    // One token went: a plain verification that spends nothing takes the second.
    const plain = await rig.ok("keys.verifyKey", { key, credits: { cost: 0 } });
    expect(plain.ratelimits[0].remaining).toBe(998);

    // Another body with the same key is refused on every node.
    for (let node = 0; node < 3; node++) {
      const reused = await rig.call("keys.verifyKey", { ...body, credits: { cost: 5 } }, { node });
      expect(reused.status).toBe(409);
      expect(reused.body.error.type).toMatch(/\/svc\/data\/idempotency_key_reused$/);
    }

    // A node started again answers the repeat from the database.
    await rig.stopNode(0);
    await rig.restartNode(0);
    const again = await rig.call("keys.verifyKey", body, { node: 0 });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(answers[0]?.body.data);
    expect((await rig.ok("keys.getKey", { keyId })).credits.remaining).toBe(96);
  });

  it("gives back the tokens of claims lost to another node, charging a pool once per key", async () => {
    const { apiId } = await rig.ok("apis.createApi", { name: "idempotency-lost" });
    const externalId = "idempotency-lost";
    await rig.ok("identities.createIdentity", { externalId, credits: { remaining: 1000 } });
    const ratelimits = [{ name: "hour", limit: 1000, duration: 3_600_000, autoApply: true }];
    const { key } = await rig.ok("keys.createKey", { apiId, externalId, ratelimits });
    const KEYS = 20;
    // Every key raced on the three nodes: two of each three lose their claim at the spend.
    const answers = await Promise.all(
      Array.from({ length: KEYS * 3 }, (_, i) =>
        rig.call(
          "keys.verifyKey",
          { key, credits: { cost: 3 }, idempotencyKey: `lost-${i % KEYS}` },
          { node: i % 3 },
        ),
      ),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    for (let k = 0; k < KEYS; k++) {
      const same = answers.filter((_, i) => i % KEYS === k).map((a) => JSON.stringify(a.body.data));
      expect(new Set(same).size).toBe(1);
    }
    const pool = await rig.ok("identities.getIdentity", { identity: externalId });
    expect(pool.credits.remaining).toBe(1000 - 3 * KEYS);
    // One token per key: a plain verification that spends nothing takes the next one.
    const plain = await rig.ok("keys.verifyKey", { key, credits: { cost: 0 } });
    expect(plain.ratelimits[0].remaining).toBe(1000 - KEYS - 1);
  });

  it("changes credits once for racing updateCredits with one key", async () => {
    const { apiId } = await rig.ok("apis.createApi", { name: "idempotency-credits" });
    const { keyId } = await rig.ok("keys.createKey", { apiId, credits: { remaining: 0 } });
    const body = { keyId, operation: "increment", value: 3, idempotencyKey: "race-2" };
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => rig.call("keys.updateCredits", body, { node: i % 3 })),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(new Set(answers.map((a) => a.body.data.remaining))).toEqual(new Set([3]));
    expect((await rig.ok("keys.getKey", { keyId })).credits.remaining).toBe(3);
  });
});
