import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
const credits = async (door: (typeof DOORS)[number], keyId: string) =>
  (await s.call(door, "keys.getKey", { keyId })).data.credits;

describe.each(DOORS)("keys.updateCredits via %s", (door) => {
  it("sets, increments and decrements (floored at 0), keeping the refill", async () => {
    const refill = { interval: "daily", amount: 100 };
    const k = await s.seed.key({ credits: { remaining: 10, refill } });
    const set = await s.call(door, "keys.updateCredits", {
      keyId: k.keyId,
      operation: "set",
      value: 40,
    });
    expect(set.data).toEqual({ remaining: 40, refill });
    const inc = await s.call(door, "keys.updateCredits", {
      keyId: k.keyId,
      operation: "increment",
      value: 5,
    });
    expect(inc.data.remaining).toBe(45);
    const dec = await s.call(door, "keys.updateCredits", {
      keyId: k.keyId,
      operation: "decrement",
      value: 1000,
    });
    expect(dec.data).toEqual({ remaining: 0, refill });
    expect(await credits(door, k.keyId)).toEqual({ remaining: 0, refill });
  });

  it("makes a key unlimited with set null (dropping its refill), answered as remaining: null", async () => {
    const k = await s.seed.key({
      credits: { remaining: 10, refill: { interval: "daily", amount: 100 } },
    });
    const res = await s.call(door, "keys.updateCredits", {
      keyId: k.keyId,
      operation: "set",
      value: null,
    });
    expect(res.data).toEqual({ remaining: null });
    expect(await credits(door, k.keyId)).toBeUndefined();
  });

  it("answers increment and decrement of an unlimited key, or without a value, with 400", async () => {
    const k = await s.seed.key();
    const before = await s.snapshot();
    for (const body of [
      { operation: "increment", value: 1 },
      { operation: "decrement", value: 1 },
      { operation: "increment" },
    ]) {
      const res = await s.call(door, "keys.updateCredits", { keyId: k.keyId, ...body });
      expect(res.status).toBe(400);
    }
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers a bad operation or a negative value with 400, an unknown key with 404", async () => {
    const k = await s.seed.key({ credits: { remaining: 1 } });
    expect(
      (await s.call(door, "keys.updateCredits", { keyId: k.keyId, operation: "set", value: -1 }))
        .status,
    ).toBe(400);
    expect((await s.call(door, "keys.updateCredits", { keyId: k.keyId })).status).toBe(400);
    expect(
      (await s.call(door, "keys.updateCredits", { keyId: "key_nope", operation: "set", value: 1 }))
        .status,
    ).toBe(404);
  });
});

describe("keys.updateCredits /v2 body rules", () => {
  it("answers an unknown operation name with 400 listing the allowed ones", async () => {
    const res = await s.call("json", "keys.updateCredits", {
      keyId: "key_x",
      operation: "add",
      value: 1,
    });
    expect(res.error?.errors?.[0]).toEqual({
      location: "/operation",
      message: "must be one of: set, increment, decrement",
    });
  });
});

describe("refills are applied lazily on read and before changes", () => {
  it("tops a daily key up to its amount once midnight UTC has passed", async () => {
    s.clock.set(Date.parse("2026-06-10T15:00:00Z"));
    const k = await s.seed.key({
      credits: { remaining: 5, refill: { interval: "daily", amount: 100 } },
    });
    expect((await credits("json", k.keyId)).remaining).toBe(5);
    s.clock.set(Date.parse("2026-06-10T23:59:59Z"));
    expect((await credits("json", k.keyId)).remaining).toBe(5);
    s.clock.set(Date.parse("2026-06-11T00:00:00Z"));
    expect((await credits("json", k.keyId)).remaining).toBe(100);
    // A change acts on the refilled balance and records the refill.
    const dec = await s.call("json", "keys.updateCredits", {
      keyId: k.keyId,
      operation: "decrement",
      value: 30,
    });
    expect(dec.data.remaining).toBe(70);
    s.clock.set(Date.parse("2026-06-11T20:00:00Z"));
    expect((await credits("json", k.keyId)).remaining).toBe(70);
  });

  it("refills a monthly key on day 31 at the end of February", async () => {
    s.clock.set(Date.parse("2027-01-31T12:00:00Z"));
    const k = await s.seed.key({
      credits: { remaining: 0, refill: { interval: "monthly", amount: 7, refillDay: 31 } },
    });
    s.clock.set(Date.parse("2027-02-27T23:00:00Z"));
    expect((await credits("json", k.keyId)).remaining).toBe(0);
    s.clock.set(Date.parse("2027-02-28T00:00:00Z"));
    expect((await credits("json", k.keyId)).remaining).toBe(7);
  });

  it("shows the same refilled balance in getKey, whoami and listKeys", async () => {
    s.clock.set(Date.parse("2026-08-01T10:00:00Z"));
    const k = await s.seed.key({
      credits: { remaining: 1, refill: { interval: "daily", amount: 9 } },
    });
    s.clock.set(Date.parse("2026-08-03T10:00:00Z"));
    const viaGet = (await s.call("json", "keys.getKey", { keyId: k.keyId })).data.credits.remaining;
    const viaWho = (await s.call("json", "keys.whoami", { key: k.key })).data.credits.remaining;
    const viaList = (await s.call("json", "apis.listKeys", { apiId: k.apiId })).data[0].credits
      .remaining;
    expect([viaGet, viaWho, viaList]).toEqual([9, 9, 9]);
  });
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
    const first = await s.seed.key({ credits: { remaining: 100 } });
    // Rotated 80 times with a 1 s grace period: 80 keys spend the latest one's balance.
    const rotated = [first.keyId];
    for (let i = 0; i < 80; i++) {
      const res = await s.call("json", "keys.rerollKey", {
        keyId: rotated.at(-1),
        expiration: 1_000,
      });
      rotated.push(res.data.keyId);
    }
    const latest = rotated.at(-1) as string;
    const setTo = (value: number) =>
      s.call("json", "keys.updateCredits", { keyId: latest, operation: "set", value });
    // In their grace period every one of them may verify: each is named.
    expect((await published(() => setTo(50))).sort()).toEqual([...rotated].sort());
    s.clock.set(start + 2_000);
    // Expired, they answer EXPIRED whatever the balance: only the holder is named.
    expect(await published(() => setTo(40))).toEqual([latest]);
  });
});
