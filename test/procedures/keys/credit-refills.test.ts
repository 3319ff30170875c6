import { describe, expect, it } from "vitest";
import { RefillInterval } from "../../../gen/latchkey/v2/common_pb.js";
import { CreditsOperation } from "../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../harness/server.js";
import { issueKey } from "./issue-key.js";

// Refills of a key's credits are applied lazily: every read (keys.getKey, keys.whoami,
// apis.listKeys) shows the balance a refill due has topped up, and keys.updateCredits acts on
// that balance and records the refill.

const s = useServer();
const remainingOf = async (keyId: string) =>
  (await s.api.keys.getKey({ keyId })).data?.credits?.remaining;
const at = (iso: string) => s.clock.set(Date.parse(iso));

describe("credit refills", () => {
  it("top a daily key up to its amount once midnight UTC has passed", async () => {
    at("2026-06-10T15:00:00Z");
    const refill = { interval: RefillInterval.DAILY, amount: 100n };
    const { keyId } = await issueKey(s, { credits: { remaining: 5n, refill } });
    expect(await remainingOf(keyId)).toBe(5n);
    at("2026-06-10T23:59:59Z");
    expect(await remainingOf(keyId)).toBe(5n);
    at("2026-06-11T00:00:00Z");
    expect(await remainingOf(keyId)).toBe(100n);
    // keys.updateCredits acts on the refilled balance and records the refill.
    const dec = await s.api.keys.updateCredits({
      keyId,
      operation: CreditsOperation.DECREMENT,
      value: 30n,
    });
    expect(dec.data?.remaining).toBe(70n);
    at("2026-06-11T20:00:00Z");
    expect(await remainingOf(keyId)).toBe(70n);
  });

  it("refill a monthly key on day 31 at the end of February", async () => {
    at("2027-01-31T12:00:00Z");
    const refill = { interval: RefillInterval.MONTHLY, amount: 7n, refillDay: 31 };
    const { keyId } = await issueKey(s, { credits: { remaining: 0n, refill } });
    at("2027-02-27T23:00:00Z");
    expect(await remainingOf(keyId)).toBe(0n);
    at("2027-02-28T00:00:00Z");
    expect(await remainingOf(keyId)).toBe(7n);
  });

  it("show the same refilled balance in keys.getKey, keys.whoami and apis.listKeys", async () => {
    at("2026-08-01T10:00:00Z");
    const refill = { interval: RefillInterval.DAILY, amount: 9n };
    const k = await issueKey(s, { credits: { remaining: 1n, refill } });
    at("2026-08-03T10:00:00Z");
    const viaWho = (await s.api.keys.whoami({ key: k.key })).data?.credits?.remaining;
    const viaList = (await s.api.apis.listKeys({ apiId: k.apiId })).data[0]?.credits?.remaining;
    expect([await remainingOf(k.keyId), viaWho, viaList]).toEqual([9n, 9n, 9n]);
  });
});
