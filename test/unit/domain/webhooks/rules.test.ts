import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { endpointUrlProblem, isPrivateAddress } from "../../../../src/domain/webhooks/addresses.js";
import {
  balanceBefore,
  crossesBelow,
  exhausts,
  refills,
} from "../../../../src/domain/webhooks/credit-transitions.js";
import {
  deliveryBody,
  EVENT_TYPES,
  normaliseEventTypes,
} from "../../../../src/domain/webhooks/events.js";
import {
  MAX_RETRY_DELAY_MS,
  nextRetryAt,
  retryDelayMs,
  shouldDisable,
} from "../../../../src/domain/webhooks/retries.js";
import { SecretBox } from "../../../../src/domain/webhooks/secret-box.js";
import { newSigningSecret, signDelivery } from "../../../../src/domain/webhooks/signature.js";

describe("signatures", () => {
  it("verify with the standardwebhooks package, under each secret of a rotation", () => {
    const [a, b] = [newSigningSecret(), newSigningSecret()];
    const body = deliveryBody(
      { type: "key.deleted", data: { keyId: "key_1", apiId: "api_1", permanent: false } },
      Date.now(),
    );
    const headers = signDelivery("msg_1", Date.now(), body, [a, b]);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const s of [a, b])
      expect(new Webhook(s).verify(body, { ...headers })).toMatchObject({ type: "key.deleted" });
    expect(() => new Webhook(newSigningSecret()).verify(body, { ...headers })).toThrow();
    expect(() => new Webhook(a).verify(`${body} `, { ...headers })).toThrow();
  });

  it("put the timestamp in whole seconds and the body in the Standard Webhooks shape", () => {
    const h = signDelivery("msg_1", 1_767_225_600_999, "{}", [newSigningSecret()]);
    expect(h["webhook-timestamp"]).toBe("1767225600");
    expect(
      JSON.parse(
        deliveryBody(
          { type: "identity.created", data: { identityId: "id_1", externalId: "u" } },
          0,
        ),
      ),
    ).toEqual({
      type: "identity.created",
      timestamp: "1970-01-01T00:00:00.000Z",
      data: { identityId: "id_1", externalId: "u" },
    });
  });
});

describe("retries", () => {
  it("wait the base, then twice as long each time, at most an hour, never longer", () => {
    expect(retryDelayMs(1, 5_000, 0)).toBe(5_000);
    expect(retryDelayMs(2, 5_000, 0)).toBe(10_000);
    expect(retryDelayMs(5, 5_000, 0)).toBe(80_000);
    expect(retryDelayMs(30, 5_000, 0)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(1, 5_000, 0.999)).toBeGreaterThanOrEqual(4_000);
    expect(retryDelayMs(1, 5_000, 0.999)).toBeLessThan(5_000);
  });

  it("give up once the next retry would leave the window", () => {
    const policy = { baseMs: 5_000, windowMs: 86_400_000 };
    expect(nextRetryAt(policy, 1, 0, 0, 0)).toBe(5_000);
    expect(nextRetryAt(policy, 30, 0, 86_000_000, 0)).toBeUndefined();
    expect(nextRetryAt(policy, 30, 0, 82_800_000, 0)).toBe(86_400_000);
  });

  it("disable after the configured time of failures only", () => {
    expect(shouldDisable(null, 10, 1)).toBe(false);
    expect(shouldDisable(0, 99, 100)).toBe(false);
    expect(shouldDisable(0, 100, 100)).toBe(true);
  });
});

describe("addresses", () => {
  it.each([
    "127.0.0.1",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "64:ff9b::a00:1",
    "2002:c0a8:101::",
    "224.0.0.1",
    "not an address",
  ])("%s is private", (a) => expect(isPrivateAddress(a)).toBe(true));

  it.each(["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"])("%s is public", (a) =>
    expect(isPrivateAddress(a)).toBe(false),
  );

  it("refuses URLs that are not http(s), carry credentials or name a private host", () => {
    expect(endpointUrlProblem("https://hooks.example.com/x", false)).toBeUndefined();
    expect(endpointUrlProblem("ftp://x.example/", false)).toContain("http");
    expect(endpointUrlProblem("https://u:p@x.example/", false)).toContain("user name");
    expect(endpointUrlProblem("http://localhost:3000/", false)).toContain("private");
    expect(endpointUrlProblem("http://2130706433/", false)).toContain("private");
    expect(endpointUrlProblem("http://localhost:3000/", true)).toBeUndefined();
  });
});

describe("credit transitions", () => {
  const move = (before: number, after: number, refilled = 0) => ({
    after,
    spent: before + refilled - after,
    refilled,
    adjusted: 0,
  });
  it("find the balance before a move", () => {
    expect(balanceBefore({ after: 5, spent: 2, refilled: 3, adjusted: -1 })).toBe(5);
  });
  it("cross a threshold only downwards, from above to at or below", () => {
    expect(crossesBelow(move(11, 10), 10)).toBe(true);
    expect(crossesBelow(move(10, 9), 10)).toBe(false);
    expect(crossesBelow(move(9, 12, 5), 10)).toBe(false);
  });
  it("exhaust on reaching 0 from above, refill when a refill added", () => {
    expect(exhausts(move(1, 0))).toBe(true);
    expect(exhausts(move(0, 0))).toBe(false);
    expect(refills(move(0, 9, 10))).toBe(true);
    expect(refills(move(3, 2))).toBe(false);
  });
});

describe("secret storage", () => {
  it("seals under the current key and opens under any key held", () => {
    const old = new SecretBox("old_key_0123456789abcdefghijklmnopqrst");
    const sealed = old.seal("whsec_abc");
    expect(sealed).toMatch(/^aes-256-gcm:[A-Za-z0-9_-]{8}:/);
    expect(sealed).not.toContain("abc");
    const rotated = new SecretBox("new_key_0123456789abcdefghijklmnopqrst", [
      "old_key_0123456789abcdefghijklmnopqrst",
    ]);
    expect(rotated.open(sealed)).toBe("whsec_abc");
    expect(() => new SecretBox("other_key_0123456789abcdefghijklmnopqr").open(sealed)).toThrow();
    expect(new SecretBox(undefined).seal("whsec_x")).toBe("plain:whsec_x");
    expect(JSON.stringify({ box: rotated })).not.toContain("key_0123");
  });

  it("refuses a sealed secret that was tampered with", () => {
    const box = new SecretBox("a_key_0123456789abcdefghijklmnopqrstuv");
    const sealed = box.seal("whsec_abc");
    const tampered = `${sealed.slice(0, -4)}${sealed.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    expect(() => box.open(tampered)).toThrow();
  });
});

describe("event types", () => {
  it("are a closed list of 13, subscribed each once in list order", () => {
    expect(EVENT_TYPES).toHaveLength(13);
    expect(normaliseEventTypes(["key.leaked", "key.created", "key.leaked"])).toEqual([
      "key.created",
      "key.leaked",
    ]);
  });
});
