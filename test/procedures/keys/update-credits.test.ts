import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CreditsSchema, RefillInterval } from "../../../gen/latchkey/v2/common_pb.js";
import { CreditsOperation } from "../../../gen/latchkey/v2/keys_pb.js";
import { IDEMPOTENCY_WINDOW_MS } from "../../../src/domain/idempotency.js";
import { currentEngine } from "../../harness/engine.js";
import { DOORS, useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.updateCredits: sets, increments or decrements the balance of a key (decrement stops
// at 0), a pending refill applied first; set without a value makes the key unlimited.

const s = useServer();
const { SET, INCREMENT, DECREMENT } = CreditsOperation;
const refill = { interval: RefillInterval.DAILY, amount: 100n };
const creditsOf = async (keyId: string) => (await s.api.keys.getKey({ keyId })).data?.credits;

describe("keys.updateCredits", () => {
  it("sets, increments and decrements (floored at 0), keeping the refill", async () => {
    const { keyId } = await issueKey(s, { credits: { remaining: 10n, refill } });
    const set = await s.api.keys.updateCredits({ keyId, operation: SET, value: 40n });
    expect(set.data).toEqual(create(CreditsSchema, { remaining: 40n, refill }));
    const inc = await s.api.keys.updateCredits({ keyId, operation: INCREMENT, value: 5n });
    expect(inc.data?.remaining).toBe(45n);
    const dec = await s.api.keys.updateCredits({ keyId, operation: DECREMENT, value: 1000n });
    expect(dec.data).toEqual(create(CreditsSchema, { remaining: 0n, refill }));
    expect(await creditsOf(keyId)).toEqual(create(CreditsSchema, { remaining: 0n, refill }));
  });

  it("makes a key unlimited with set and no value, dropping its refill", async () => {
    const { keyId } = await issueKey(s, { credits: { remaining: 10n, refill } });
    const { data } = await s.api.keys.updateCredits({ keyId, operation: SET });
    expect(data).toEqual(create(CreditsSchema, {}));
    expect(await creditsOf(keyId)).toBeUndefined();
  });

  it("answers increment and decrement of an unlimited key, or without a value, with 400", async () => {
    const { keyId } = await issueKey(s);
    const before = await s.snapshot();
    for (const [operation, value] of [
      [INCREMENT, 1n],
      [DECREMENT, 1n],
      [INCREMENT, undefined],
    ] as const) {
      const r = await refusal(s.api.keys.updateCredits({ keyId, operation, value }));
      expect(r.status, `${CreditsOperation[operation]} ${value}`).toBe(400);
    }
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers a negative value or no operation with 400, an unknown key with 404", async () => {
    const { keyId } = await issueKey(s, { credits: { remaining: 1n } });
    const negative = await refusal(s.api.keys.updateCredits({ keyId, operation: SET, value: -1n }));
    expect(negative.status).toBe(400);
    expect(negative.errors.map((e) => e.location)).toEqual(["/value"]);
    const unset = await refusal(s.api.keys.updateCredits({ keyId }));
    expect(unset.status).toBe(400);
    expect(unset.errors.map((e) => e.location)).toContain("/operation");
    const unknown = { keyId: "key_nope", operation: SET, value: 1n };
    const missing = await refusal(s.api.keys.updateCredits(unknown));
    expect(missing).toMatchObject({ status: 404, errorCode: "err:svc:data:key_not_found" });
  });

  describe("on the /v2 JSON door", () => {
    it("answers an unknown operation name with 400 listing the allowed ones", async () => {
      const res = await s.call("json", "keys.updateCredits", {
        keyId: "key_x",
        operation: "add",
        value: 1,
      });
      expect(res.status).toBe(400);
      expect(res.error?.errors?.[0]).toEqual({
        location: "/operation",
        message: "must be one of: set, increment, decrement",
      });
    });

    it("takes set with value null as unlimited", async () => {
      // The door's answers are checked against the OpenAPI document, which requires
      // `remaining`: the 200 carries it as null.
      const { keyId } = await issueKey(s, { credits: { remaining: 10n, refill } });
      const body = { keyId, operation: "set", value: null };
      expect((await s.call("json", "keys.updateCredits", body)).status).toBe(200);
      expect(await creditsOf(keyId)).toBeUndefined();
    });
  });

  describe("with an idempotencyKey", () => {
    let n = 0;
    const idem = () => `credits-${++n}-${Date.now()}`;
    const auditCount = async (keyId: string) =>
      (
        await s.db.query<{ n: number }>(
          "select count(*)::int as n from audit_logs where resource_id = $1 and event = 'key.update'",
          [keyId],
        )
      )[0]?.n;

    it("makes the change once: a repeat answers the first credits and changes nothing", async () => {
      const { keyId } = await issueKey(s, { credits: { remaining: 10n } });
      const idempotencyKey = idem();
      const body = { keyId, operation: INCREMENT, value: 5n, idempotencyKey };
      const first = await s.api.keys.updateCredits(body);
      expect(first.data?.remaining).toBe(15n);
      await s.api.keys.updateCredits({ keyId, operation: DECREMENT, value: 1n });
      const again = await s.api.keys.updateCredits(body);
      // The first call's answer, not the balance now (14).
      expect(again.data).toEqual(first.data);
      expect((await creditsOf(keyId))?.remaining).toBe(14n);
      expect(await auditCount(keyId)).toBe(2);
    });

    it("answers a repeat with another body with 409, changing nothing", async () => {
      const { keyId } = await issueKey(s, { credits: { remaining: 10n } });
      const idempotencyKey = idem();
      await s.api.keys.updateCredits({ keyId, operation: INCREMENT, value: 5n, idempotencyKey });
      const { key } = await s.seed.key({ credits: { remaining: 1 } });
      const before = await s.snapshot();
      for (const body of [
        { keyId, operation: INCREMENT, value: 6n, idempotencyKey },
        { keyId, operation: DECREMENT, value: 5n, idempotencyKey },
      ]) {
        const r = await refusal(s.api.keys.updateCredits(body));
        expect(r).toMatchObject({ status: 409, errorCode: "err:svc:data:idempotency_key_reused" });
      }
      // The key is one namespace per workspace: a verification's body is another body too.
      const verify = await refusal(s.api.keys.verifyKey({ key, idempotencyKey }));
      expect(verify.status).toBe(409);
      expect(await s.changesSince(before)).toEqual({});
    });

    it("leaves no record when the change is refused, so a repeat is carried out", async () => {
      const { keyId } = await issueKey(s);
      const idempotencyKey = idem();
      const unlimited = { keyId, operation: INCREMENT, value: 1n, idempotencyKey };
      expect((await refusal(s.api.keys.updateCredits(unlimited))).status).toBe(400);
      await s.api.keys.updateCredits({ keyId, operation: SET, value: 3n });
      expect((await s.api.keys.updateCredits(unlimited)).data?.remaining).toBe(4n);
    });

    it("answers 400 for an empty key or one over 255 characters, on every door", async () => {
      const { keyId } = await issueKey(s, { credits: { remaining: 10n } });
      for (const door of DOORS) {
        for (const idempotencyKey of ["", "k".repeat(256)]) {
          const body = { keyId, operation: "increment", value: 1, idempotencyKey };
          const res = await s.call(door, "keys.updateCredits", body);
          expect(res.status, door).toBe(400);
          expect(res.error?.errors?.map((e) => e.location)).toEqual(["/idempotencyKey"]);
        }
      }
      expect((await creditsOf(keyId))?.remaining).toBe(10n);
    });

    it("forgets a key after 24 hours", async () => {
      const { keyId } = await issueKey(s, { credits: { remaining: 10n } });
      const body = { keyId, operation: INCREMENT, value: 1n, idempotencyKey: idem() };
      await s.api.keys.updateCredits(body);
      s.clock.advance(IDEMPOTENCY_WINDOW_MS - 1);
      expect((await s.api.keys.updateCredits(body)).data?.remaining).toBe(11n);
      s.clock.advance(1);
      expect((await s.api.keys.updateCredits(body)).data?.remaining).toBe(12n);
    });

    it.skipIf(currentEngine() !== "postgres")(
      "changes once for 30 concurrent calls with one key",
      async () => {
        const { keyId } = await issueKey(s, { credits: { remaining: 0n } });
        const body = { keyId, operation: INCREMENT, value: 7n, idempotencyKey: idem() };
        const answers = await Promise.all(
          Array.from({ length: 30 }, () => s.api.keys.updateCredits(body)),
        );
        expect(answers.map((a) => a.data?.remaining)).toEqual(answers.map(() => 7n));
        expect((await creditsOf(keyId))?.remaining).toBe(7n);
      },
    );
  });

  describe("invalidations of the keys that spend a balance", () => {
    /** The key invalidations the next mutations publish to other nodes. */
    async function published(change: () => Promise<unknown>): Promise<string[]> {
      const bus = s.app.deps.bus;
      const notify = bus.notify;
      const seen: string[] = [];
      bus.notify = (tx, events) => {
        for (const e of events) seen.push(e.kind === "key" ? e.id : e.kind);
        return notify.call(bus, tx, events);
      };
      try {
        await change();
      } finally {
        bus.notify = notify;
      }
      return seen;
    }

    it("name the rerolled keys still in their grace period, not the expired ones", async () => {
      const start = Date.parse("2026-08-01T09:00:00Z");
      s.clock.set(start);
      const first = await issueKey(s, { credits: { remaining: 100n } });
      // Rotated 80 times with a 1 s grace period: 80 keys spend the latest one's balance.
      const rotated = [first.keyId];
      for (let i = 0; i < 80; i++) {
        const keyId = rotated.at(-1) as string;
        const { data } = await s.api.keys.rerollKey({ keyId, expiration: 1_000n });
        rotated.push(data?.keyId as string);
      }
      const latest = rotated.at(-1) as string;
      const setTo = (value: bigint) =>
        s.api.keys.updateCredits({ keyId: latest, operation: SET, value });
      // In their grace period every one of them may verify: each is named.
      expect((await published(() => setTo(50n))).sort()).toEqual([...rotated].sort());
      s.clock.set(start + 2_000);
      // Expired, they answer EXPIRED whatever the balance: only the holder is named.
      expect(await published(() => setTo(40n))).toEqual([latest]);
    });
  });
});
