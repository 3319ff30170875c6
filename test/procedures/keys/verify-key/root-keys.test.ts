import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode, VerifyKeyResponseDataSchema } from "../../../../gen/latchkey/v2/keys_pb.js";
import { startServer, type TestServer, useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";
import { HOUR, verifierOf, verifyWith } from "./calls.js";

// keys.verifyKey and root keys: without a header it verifies in the key's own workspace, and
// so does a root key allowed to verify keys of the key's API; a root key with no verify
// permission at all is 403, an unknown one 401 (the generated authentication cases cover
// every malformed, unknown and revoked key); with VERIFY_REQUIRES_ROOT_KEY=true the
// header-less form is 401. None of the refusals spends anything.

const s = useServer();
const verify = verifierOf(s);

/** A key with a balance and an auto-applied limit, to show that a refusal spent nothing. */
const metered = () =>
  s.seed.key({
    credits: { remaining: 10 },
    ratelimits: [{ name: "window", limit: 5, duration: HOUR, autoApply: true }],
  });

/** What the key has left, seen through a verification of cost 0. */
async function expectUntouched(key: string) {
  const data = await verify({ key, credits: { cost: 0n } });
  expect(data).toMatchObject({ code: VerifyKeyCode.VALID, credits: 10n });
  expect(data.ratelimits).toMatchObject([{ name: "window", remaining: 4n }]);
}

describe("keys.verifyKey and root keys", () => {
  it("answers a root key with no verify permission at all with 403, spending nothing", async () => {
    const k = await metered();
    const reader = await s.seed.rootKey(["api.*.read_key", "api.*.create_key"]);
    const r = await refusal(s.as(reader).keys.verifyKey({ key: k.key }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain("api.*.verify_key");
    expect(r.requestId).toMatch(/^req_/);
    await expectUntouched(k.key);
  });

  it("answers an unknown root key with 401, spending nothing", async () => {
    const k = await metered();
    const r = await refusal(s.as("root_unknown_key_zz").keys.verifyKey({ key: k.key }));
    expect(r).toMatchObject({ status: 401, errorCode: "err:svc:authentication:key_not_found" });
    await expectUntouched(k.key);
  });

  it("verifies with a root key allowed on the key's API, and without any header", async () => {
    const k = await s.seed.key({ name: "root key test", meta: { by: "root key" } });
    const right = await s.seed.rootKey([`api.${k.apiId}.verify_key`]);
    for (const auth of [right, null]) {
      const res = await s.as(auth).keys.verifyKey({ key: k.key });
      expect(res.meta?.requestId).toMatch(/^req_/);
      expect(res.data).toEqual(
        create(VerifyKeyResponseDataSchema, {
          valid: true,
          code: VerifyKeyCode.VALID,
          keyId: k.keyId,
          name: "root key test",
          meta: { by: "root key" },
          enabled: true,
        }),
      );
    }
  });
});

describe("keys.verifyKey with VERIFY_REQUIRES_ROOT_KEY=true", () => {
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startServer({ config: { verifyRequiresRootKey: true } });
  });
  afterAll(() => strict.stop());

  it("answers a request without a root key with 401 and spends nothing", async () => {
    const k = await strict.seed.key({ credits: { remaining: 3 } });
    const anonymous = strict.as(null).keys;
    const missing = { status: 401, errorCode: "err:svc:authentication:missing" };
    expect(await refusal(anonymous.verifyKey({ key: k.key }))).toMatchObject(missing);
    expect(await refusal(anonymous.verifyKey({ key: "sk_unknown_x" }))).toMatchObject(missing);
    // Naming the key's API does not make the header-less form available again.
    expect(await refusal(anonymous.verifyKey({ key: k.key, apiId: k.apiId }))).toMatchObject(
      missing,
    );
    expect(await verifyWith(strict.api, { key: k.key })).toMatchObject({
      code: VerifyKeyCode.VALID,
      credits: 2n,
    });
  });
});
