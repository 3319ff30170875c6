import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { expireIdempotencyRecords } from "../../../../src/analytics/retention.js";
import { IDEMPOTENCY_WINDOW_MS } from "../../../../src/domain/idempotency.js";
import { currentEngine } from "../../../harness/engine.js";
import { DOORS, useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";
import { HOUR, type VerifyRequest, verifyWith } from "./calls.js";

// keys.verifyKey with an idempotencyKey: the first call in the root key's workspace is carried
// out and its answer stored with its charge; a repeat within 24 hours answers the same and
// charges nothing (no credits, no rate-limit tokens, no pool credits); a repeat asking
// something else is 409 idempotency_key_reused.

const s = useServer();
let n = 0;
/** A fresh idempotency key. */
const idem = () => `idem-${++n}-${Date.now()}`;
const verify = (req: VerifyRequest) => verifyWith(s.api, req);

/** The balance stored for a key, read from the database. */
const stored = async (keyId: string) =>
  (await s.db.query<{ remaining: number }>("select remaining from keys where id = $1", [keyId]))[0]
    ?.remaining;

const verifications = async (keyId: string) => {
  const rows = await s.db.query<{ n: number }>(
    "select count(*)::int as n from key_verifications where key_id = $1",
    [keyId],
  );
  return rows[0]?.n ?? 0;
};

describe("keys.verifyKey with an idempotencyKey", () => {
  it("answers a repeat with the first outcome and charges nothing", async () => {
    const k = await s.seed.key({ credits: { remaining: 10 } });
    const idempotencyKey = idem();
    const first = await verify({ key: k.key, credits: { cost: 3n }, idempotencyKey });
    expect(first).toMatchObject({ code: VerifyKeyCode.VALID, valid: true, credits: 7n });
    for (let i = 0; i < 3; i++) {
      expect(await verify({ key: k.key, credits: { cost: 3n }, idempotencyKey })).toEqual(first);
    }
    expect(await stored(k.keyId)).toBe(7);
    // Another key is another verification.
    const second = await verify({ key: k.key, credits: { cost: 3n }, idempotencyKey: idem() });
    expect(second.credits).toBe(4n);
    // The answer of the first call stays what it was, whatever the balance is now.
    expect(await verify({ key: k.key, credits: { cost: 3n }, idempotencyKey })).toEqual(first);
  });

  it("records the first verification's event only", async () => {
    const k = await s.seed.key({ credits: { remaining: 10 } });
    const idempotencyKey = idem();
    await verify({ key: k.key, idempotencyKey });
    await verify({ key: k.key, idempotencyKey });
    await s.app.deps.events.flush();
    expect(await verifications(k.keyId)).toBe(1);
  });

  it("takes no rate-limit tokens on a repeat, and repeats a refusal as it was", async () => {
    const k = await s.seed.key({
      credits: { remaining: 1 },
      ratelimits: [{ name: "hour", limit: 5, duration: HOUR, autoApply: true }],
    });
    const valid = idem();
    const first = await verify({ key: k.key, idempotencyKey: valid });
    expect(first.ratelimits[0]?.remaining).toBe(4n);
    await verify({ key: k.key, idempotencyKey: valid });
    const exceeded = idem();
    const refused = await verify({ key: k.key, idempotencyKey: exceeded });
    expect(refused).toMatchObject({ code: VerifyKeyCode.USAGE_EXCEEDED, credits: 0n });
    // The refusal gave its token back: 4 left, as after the first call.
    expect(refused.ratelimits[0]?.remaining).toBe(4n);
    expect(await verify({ key: k.key, idempotencyKey: exceeded })).toEqual(refused);
    // A plain verification shows that only the first call took a token.
    const plain = await verify({ key: k.key, credits: { cost: 0n } });
    expect(plain.ratelimits[0]?.remaining).toBe(3n);
  });

  it("spends an identity's pool once", async () => {
    const externalId = `idem_pool_${Date.now()}`;
    await s.api.identities.createIdentity({ externalId, credits: { remaining: 5n } });
    const k = await s.seed.key({ externalId });
    const idempotencyKey = idem();
    const first = await verify({ key: k.key, credits: { cost: 2n }, idempotencyKey });
    expect(first.identity?.credits).toBe(3n);
    expect(await verify({ key: k.key, credits: { cost: 2n }, idempotencyKey })).toEqual(first);
    const pool = await s.api.identities.getIdentity({ identity: externalId });
    expect(pool.data?.credits?.remaining).toBe(3n);
  });

  it("replays an answer stored with the pool as a Credits object, as the balance", async () => {
    // An earlier release stored the pool as {"remaining": "3"}; its records live 24 hours.
    const externalId = `idem_old_pool_${Date.now()}`;
    await s.api.identities.createIdentity({ externalId, credits: { remaining: 5n } });
    const k = await s.seed.key({ externalId });
    const idempotencyKey = idem();
    const first = await verify({ key: k.key, credits: { cost: 2n }, idempotencyKey });
    const [row] = await s.db.query<{ answer: string }>(
      "select answer from idempotency_records where idempotency_key = $1",
      [idempotencyKey],
    );
    const answer = JSON.parse(row?.answer as string);
    expect(answer.identity.credits).toBe("3");
    answer.identity.credits = { remaining: "3" };
    await s.db.query("update idempotency_records set answer = $1 where idempotency_key = $2", [
      JSON.stringify(answer),
      idempotencyKey,
    ]);
    const repeat = await verify({ key: k.key, credits: { cost: 2n }, idempotencyKey });
    expect(repeat).toEqual(first);
    expect(repeat.identity?.credits).toBe(3n);
  });

  it("records an unknown key's answer too, and repeats it after the key appears", async () => {
    const idempotencyKey = idem();
    const missing = await verify({ key: "sk_not_yet_there", idempotencyKey });
    expect(missing.code).toBe(VerifyKeyCode.NOT_FOUND);
    const k = await s.seed.key({ credits: { remaining: 3 } });
    expect(await verify({ key: k.key, idempotencyKey: idem() })).toMatchObject({ credits: 2n });
    // The same body as the first call: its answer, whatever the key store holds now.
    expect(await verify({ key: "sk_not_yet_there", idempotencyKey })).toEqual(missing);
  });

  it("refuses a repeat with another body with 409 idempotency_key_reused", async () => {
    const k = await s.seed.key({ credits: { remaining: 10 } });
    const other = await s.seed.key({ credits: { remaining: 10 }, apiId: k.apiId });
    const idempotencyKey = idem();
    await verify({ key: k.key, idempotencyKey });
    const changes: VerifyRequest[] = [
      { key: other.key, idempotencyKey },
      { key: k.key, credits: { cost: 2n }, idempotencyKey },
      { key: k.key, permissions: "documents.read", idempotencyKey },
      { key: k.key, tags: ["a"], idempotencyKey },
      { key: k.key, ratelimits: [{ name: "burst", limit: 1n, duration: 1000n }], idempotencyKey },
      { key: k.key, apiId: k.apiId, idempotencyKey },
    ];
    for (const req of changes) {
      const r = await refusal(s.api.keys.verifyKey(req));
      expect(r, JSON.stringify(Object.keys(req))).toMatchObject({
        status: 409,
        errorCode: "err:svc:data:idempotency_key_reused",
      });
      expect(r.detail).toMatch(/idempotencyKey/);
    }
    // Another root key of the workspace is another caller.
    const another = await s.seed.rootKey(["api.*.verify_key"]);
    const r = await refusal(s.as(another).keys.verifyKey({ key: k.key, idempotencyKey }));
    expect(r.status).toBe(409);
    expect(await stored(k.keyId)).toBe(9);
    expect(await stored(other.keyId)).toBe(10);
  });

  it("keeps keys per workspace", async () => {
    const ws = await s.seed.workspace();
    const root = await s.seed.rootKey(["*.*.*"], ws);
    const apiId = await s.seed.api(ws);
    const theirs = await s.seed.key({ apiId, credits: { remaining: 10 } }, root);
    const ours = await s.seed.key({ credits: { remaining: 10 } });
    const idempotencyKey = idem();
    expect((await verify({ key: ours.key, idempotencyKey })).credits).toBe(9n);
    const elsewhere = await verifyWith(s.as(root), { key: theirs.key, idempotencyKey });
    expect(elsewhere.credits).toBe(9n);
  });

  it("answers an empty key, one over 255 characters or one without a root key with 400", async () => {
    const k = await s.seed.key({ credits: { remaining: 10 } });
    for (const idempotencyKey of ["", "x".repeat(256)]) {
      const r = await refusal(s.api.keys.verifyKey({ key: k.key, idempotencyKey }));
      expect(r.status).toBe(400);
      expect(r.errors.map((e) => e.location)).toEqual(["/idempotencyKey"]);
    }
    const anonymous = await refusal(
      s.as(null).keys.verifyKey({ key: k.key, apiId: k.apiId, idempotencyKey: idem() }),
    );
    expect(anonymous.status).toBe(400);
    expect(anonymous.errors.map((e) => e.location)).toEqual(["/idempotencyKey"]);
    // 255 characters are fine.
    const longest = await verify({ key: k.key, idempotencyKey: "y".repeat(255) });
    expect(longest.code).toBe(VerifyKeyCode.VALID);
    expect(await stored(k.keyId)).toBe(9);
  });

  it("forgets a key after 24 hours and its record goes in the retention pass", async () => {
    const k = await s.seed.key({ credits: { remaining: 10 } });
    const idempotencyKey = idem();
    const first = await verify({ key: k.key, idempotencyKey });
    s.clock.advance(IDEMPOTENCY_WINDOW_MS - 1);
    expect(await verify({ key: k.key, idempotencyKey })).toEqual(first);
    expect(await expireIdempotencyRecords(s.db, s.clock.now())).toBe(0);
    s.clock.advance(1);
    // Past the window the key is free again: a new verification, charged.
    expect((await verify({ key: k.key, idempotencyKey })).credits).toBe(8n);
    // That one is recorded anew; an older record of another key goes in the pass.
    const old = idem();
    await verify({ key: k.key, idempotencyKey: old });
    s.clock.advance(IDEMPOTENCY_WINDOW_MS);
    expect(await expireIdempotencyRecords(s.db, s.clock.now())).toBeGreaterThanOrEqual(2);
    const left = await s.db.query(
      "select 1 from idempotency_records where idempotency_key = any($1::text[])",
      [[idempotencyKey, old]],
    );
    expect(left).toEqual([]);
  });

  it("answers alike on every door, the repeat included", async () => {
    const k = await s.seed.key({ credits: { remaining: 10 } });
    const answers: unknown[] = [];
    const idempotencyKey = idem();
    for (const door of DOORS) {
      const res = await s.call(door, "keys.verifyKey", { key: k.key, idempotencyKey });
      expect(res.status, door).toBe(200);
      answers.push(res.data);
    }
    expect(answers.every((a) => JSON.stringify(a) === JSON.stringify(answers[0]))).toBe(true);
    expect(answers[0]).toMatchObject({ valid: true, code: "VALID", credits: 9 });
    const reused = await s.call("json", "keys.verifyKey", {
      key: k.key,
      idempotencyKey,
      tags: ["other"],
    });
    expect(reused.status).toBe(409);
    expect(reused.error?.code).toBe("err:svc:data:idempotency_key_reused");
    const empty = await s.call("json", "keys.verifyKey", { key: k.key, idempotencyKey: "" });
    expect(empty.status).toBe(400);
    expect(empty.error?.errors?.map((e) => e.location)).toEqual(["/idempotencyKey"]);
    expect(await stored(k.keyId)).toBe(9);
  });

  it.skipIf(currentEngine() !== "postgres")(
    "charges once for 50 concurrent calls with one key",
    async () => {
      const k = await s.seed.key({
        credits: { remaining: 100 },
        ratelimits: [{ name: "hour", limit: 1000, duration: HOUR, autoApply: true }],
      });
      const idempotencyKey = idem();
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          verify({ key: k.key, credits: { cost: 5n }, idempotencyKey }),
        ),
      );
      expect(new Set(answers.map((a) => JSON.stringify(a, (_, v) => String(v)))).size).toBe(1);
      expect(answers[0]).toMatchObject({ code: VerifyKeyCode.VALID, credits: 95n });
      expect(await stored(k.keyId)).toBe(95);
      const plain = await verify({ key: k.key, credits: { cost: 0n } });
      expect(plain.ratelimits[0]?.remaining).toBe(998n);
    },
  );
});
