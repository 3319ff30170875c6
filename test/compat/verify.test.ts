import { Unkey } from "@unkey/api";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../harness/server.js";

const s = useServer();
let unkey: Unkey;
beforeAll(() => {
  unkey = new Unkey({ rootKey: s.rootKey, serverURL: s.url });
});

describe("@unkey/api 2.5.1 against Latchkey: verifyKey", () => {
  it("verifies keys and reads every outcome the SDK knows", async () => {
    const apiId = (await unkey.apis.createApi({ name: "sdk verify" })).data.apiId;
    const created = await unkey.keys.createKey({
      apiId,
      meta: { environment: "test" },
      permissions: ["documents.*"],
      credits: { remaining: 2 },
      ratelimits: [{ name: "requests", limit: 10, duration: 60000, autoApply: true }],
      externalId: "sdk_verifier",
    });
    const key = created.data.key;
    const ok = await unkey.keys.verifyKey({ key, permissions: "documents.read", tags: ["sdk=1"] });
    expect(ok.data).toMatchObject({
      valid: true,
      code: "VALID",
      credits: 1,
      meta: { environment: "test" },
      identity: { externalId: "sdk_verifier" },
    });
    expect(ok.data.ratelimits?.[0]).toMatchObject({
      name: "requests",
      remaining: 9,
      exceeded: false,
    });
    expect((await unkey.keys.verifyKey({ key, credits: { cost: 5 } })).data.code).toBe(
      "USAGE_EXCEEDED",
    );
    expect((await unkey.keys.verifyKey({ key, permissions: "billing.read" })).data.code).toBe(
      "INSUFFICIENT_PERMISSIONS",
    );
    expect(
      (
        await unkey.keys.verifyKey({
          key,
          ratelimits: [{ name: "burst", limit: 1, duration: 1000 }],
        })
      ).data.code,
    ).toBe("VALID");
    await unkey.keys.updateKey({ keyId: created.data.keyId, enabled: false });
    expect((await unkey.keys.verifyKey({ key })).data.code).toBe("DISABLED");
    const missing = await unkey.keys.verifyKey({ key: "sk_not_there" });
    expect(missing.data).toEqual({ valid: false, code: "NOT_FOUND" });
  });
});
