import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";
import { HOUR, NOT_FOUND_ANSWER, type VerifyRequest, verifierOf } from "./calls.js";

// keys.verifyKey's request bounds (proto/latchkey/v2/keys.proto): every violation is a 400
// naming the field, and spends nothing.

const s = useServer();
const verify = verifierOf(s);

/** A key with a balance and an auto-applied limit, to show a rejected request spent nothing. */
const metered = () =>
  s.seed.key({
    credits: { remaining: 10 },
    ratelimits: [{ name: "window", limit: 5, duration: HOUR, autoApply: true }],
  });

/** The next verification of the key spends from an untouched balance and limit. */
async function expectNothingSpent(key: string) {
  const next = await verify({ key });
  expect(next).toMatchObject({ code: VerifyKeyCode.VALID, credits: 9n });
  expect(next.ratelimits).toMatchObject([{ name: "window", remaining: 4n }]);
}

/** Expects the request refused with 400 invalid_input at `location`. */
async function expectInvalidAt(req: VerifyRequest, location: string) {
  const r = await refusal(s.as(null).keys.verifyKey(req));
  expect(r).toMatchObject({ status: 400, errorCode: "err:svc:application:invalid_input" });
  expect(r.errors[0]?.location).toBe(location);
}

describe("keys.verifyKey input", () => {
  it.each([
    ["a negative credits cost", { credits: { cost: -1n } }, "/credits/cost"],
    ["a credits cost above 10^12", { credits: { cost: 1_000_000_000_001n } }, "/credits/cost"],
    [
      "a negative rate-limit cost",
      { ratelimits: [{ name: "window", cost: -1n }] },
      "/ratelimits/0/cost",
    ],
    [
      "an ad-hoc limit of 0",
      { ratelimits: [{ name: "adhoc", limit: 0n, duration: 60_000n }] },
      "/ratelimits/0/limit",
    ],
    [
      "an ad-hoc duration of 999 ms",
      { ratelimits: [{ name: "adhoc", limit: 10n, duration: 999n }] },
      "/ratelimits/0/duration",
    ],
    ["21 tags", { tags: Array.from({ length: 21 }, (_, i) => `tag${i}`) }, "/tags"],
    ["a 513-character tag", { tags: ["ok", "t".repeat(513)] }, "/tags/1"],
    ["an empty tag", { tags: [""] }, "/tags/0"],
    ["a 1001-character permissions query", { permissions: "p".repeat(1001) }, "/permissions"],
  ] as [string, VerifyRequest, string][])(
    "rejects %s with 400 at its field, spending nothing",
    async (_, extra, location) => {
      const k = await metered();
      await expectInvalidAt({ key: k.key, ...extra }, location);
      await expectNothingSpent(k.key);
    },
  );

  it("rejects a missing key with 400 at /key", async () => {
    await expectInvalidAt({ tags: ["no key"] }, "/key");
  });

  it("rejects a 513-character key with 400 at /key, and takes one of 512", async () => {
    await expectInvalidAt({ key: "k".repeat(513) }, "/key");
    expect(await verify({ key: "k".repeat(512) })).toEqual(NOT_FOUND_ANSWER);
  });

  it("accepts the bounds themselves: cost 10^12, 20 tags of 512, a 1000-character query", async () => {
    const k = await metered();
    const data = await verify({
      key: k.key,
      credits: { cost: 1_000_000_000_000n },
      tags: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(512, "x")),
      permissions: "p".repeat(1000),
      ratelimits: [{ name: "adhoc", limit: 1n, duration: 1000n, cost: 0n }],
    });
    expect(data.code).toBe(VerifyKeyCode.INSUFFICIENT_PERMISSIONS);
  });

  it("accepts migrationId and ignores it (VALID, the same answer as without it)", async () => {
    const k = await metered();
    const data = await verify({ key: k.key, migrationId: "some_migration" });
    expect(data).toMatchObject({
      valid: true,
      code: VerifyKeyCode.VALID,
      keyId: k.keyId,
      credits: 9n,
    });
    const unknown = await verify({ key: "sk_unknown_with_migration", migrationId: "m_1" });
    expect(unknown).toEqual(NOT_FOUND_ANSWER);
  });

  it("reads a credits message without a cost as cost 0: protobuf cannot tell it from 0", async () => {
    const k = await s.seed.key({ credits: { remaining: 3 } });
    expect(await verify({ key: k.key, credits: {} })).toMatchObject({
      code: VerifyKeyCode.VALID,
      credits: 3n,
    });
    expect((await verify({ key: k.key })).credits).toBe(2n);
  });
});

describe("keys.verifyKey on the /v2 JSON door", () => {
  it("refuses credits without a cost with 400 at /credits/cost, spending nothing", async () => {
    const k = await metered();
    const res = await s.call("json", "keys.verifyKey", { key: k.key, credits: {} }, null);
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe("err:svc:application:invalid_input");
    expect(res.error?.errors?.[0]?.location).toBe("/credits/cost");
    await expectNothingSpent(k.key);
  });
});
