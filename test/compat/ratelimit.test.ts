import { Unkey } from "@unkey/api";
import * as errors from "@unkey/api/models/errors";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../harness/server.js";

const s = useServer();
let unkey: Unkey;
beforeAll(() => {
  unkey = new Unkey({ rootKey: s.rootKey, serverURL: s.url });
});

describe("@unkey/api 2.5.1 against Latchkey: rate limiting", () => {
  it("limits, auto-creating the namespace, and reports what is left", async () => {
    const first = await unkey.ratelimit.limit({
      namespace: "sdk.email",
      identifier: "user_1",
      limit: 2,
      duration: 60_000,
    });
    expect(first.data).toMatchObject({ success: true, limit: 2, remaining: 1 });
    expect(first.data.reset).toBeGreaterThan(Date.now() - 60_000);
    await unkey.ratelimit.limit({
      namespace: "sdk.email",
      identifier: "user_1",
      limit: 2,
      duration: 60_000,
    });
    const third = await unkey.ratelimit.limit({
      namespace: "sdk.email",
      identifier: "user_1",
      limit: 2,
      duration: 60_000,
    });
    expect(third.data).toMatchObject({ success: false, remaining: 0 });
  });

  it("multiLimit sends the SDK's bare array and is all-or-nothing", async () => {
    const limits = [
      { namespace: "sdk.multi", identifier: "a", limit: 1, duration: 60_000 },
      { namespace: "sdk.multi", identifier: "b", limit: 5, duration: 60_000 },
    ];
    const ok = await unkey.ratelimit.multiLimit(limits);
    expect(ok.data.passed).toBe(true);
    expect(ok.data.limits.map((l) => [l.identifier, l.passed, l.remaining])).toEqual([
      ["a", true, 0],
      ["b", true, 4],
    ]);
    const denied = await unkey.ratelimit.multiLimit(limits);
    expect(denied.data.passed).toBe(false);
    // "b" was not charged because "a" refused the whole batch.
    const b = denied.data.limits.find((l) => l.identifier === "b");
    expect(b?.remaining).toBe(4);
  });

  it("sets, gets, lists and deletes overrides, and the limit follows them", async () => {
    await unkey.ratelimit.limit({
      namespace: "sdk.api",
      identifier: "seed",
      limit: 1,
      duration: 60_000,
    });
    const set = await unkey.ratelimit.setOverride({
      namespace: "sdk.api",
      identifier: "vip_*",
      limit: 50,
      duration: 60_000,
    });
    const overrideId = set.data.overrideId;
    expect(overrideId).toMatch(/^rlor_/);

    const got = await unkey.ratelimit.getOverride({ namespace: "sdk.api", identifier: "vip_*" });
    expect(got.data).toEqual({ overrideId, identifier: "vip_*", limit: 50, duration: 60_000 });

    const decided = await unkey.ratelimit.limit({
      namespace: "sdk.api",
      identifier: "vip_42",
      limit: 1,
      duration: 60_000,
    });
    expect(decided.data).toMatchObject({ success: true, limit: 50, remaining: 49, overrideId });

    const list = await unkey.ratelimit.listOverrides({ namespace: "sdk.api" });
    expect(list.result.data.map((o) => o.overrideId)).toEqual([overrideId]);

    await unkey.ratelimit.deleteOverride({ namespace: "sdk.api", identifier: "vip_*" });
    const gone = await unkey.ratelimit
      .getOverride({ namespace: "sdk.api", identifier: "vip_*" })
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(errors.NotFoundErrorResponse);
  });

  it("surfaces bad input and unknown namespaces as the SDK's typed errors", async () => {
    const bad = await unkey.ratelimit
      .limit({ namespace: "sdk.bad", identifier: "x", limit: 1, duration: 10 })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(errors.BadRequestErrorResponse);
    const missing = await unkey.ratelimit
      .setOverride({ namespace: "sdk.never", identifier: "x", limit: 1, duration: 60_000 })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(errors.NotFoundErrorResponse);
  });
});
