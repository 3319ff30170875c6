import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DOORS,
  startServer,
  type TestDoor,
  type TestServer,
  useServer,
} from "../../harness/server.js";

// keys.verifyKey and root keys: no header verifies in the key's own
// workspace; a root key with no verify permission at all is 403, an unknown one 401; with
// VERIFY_REQUIRES_ROOT_KEY=true the header-less form is 401. None of them spends anything.

const s = useServer();
const HOUR = 3_600_000;

/** Both gRPC doors the harness has besides the three every procedure is tested through. */
const MORE_DOORS: readonly TestDoor[] = ["grpc-main", "grpc-web"];

describe.each([...DOORS, ...MORE_DOORS])("keys.verifyKey root keys via %s", (door) => {
  const metered = () =>
    s.seed.key({
      credits: { remaining: 10 },
      ratelimits: [{ name: "window", limit: 5, duration: HOUR, autoApply: true }],
    });
  /** What the key has left, seen through a verification of cost 0. */
  const untouched = async (key: string) => {
    const res = await s.call(door, "keys.verifyKey", { key, credits: { cost: 0 } }, null);
    expect(res.data).toMatchObject({ code: "VALID", credits: 10 });
    expect(res.data.ratelimits).toEqual([
      expect.objectContaining({ name: "window", remaining: 4 }),
    ]);
  };

  it("answers a root key with no verify permission at all with 403, spending nothing", async () => {
    const k = await metered();
    const reader = await s.seed.rootKey(["api.*.read_key", "api.*.create_key"]);
    const res = await s.call(door, "keys.verifyKey", { key: k.key }, reader);
    expect(res.status).toBe(403);
    expect(res.error?.code).toBe("err:svc:authorization:insufficient_permissions");
    expect(res.requestId).toMatch(/^req_/);
    await untouched(k.key);
  });

  it("answers an unknown root key with 401, spending nothing", async () => {
    const k = await metered();
    const res = await s.call(door, "keys.verifyKey", { key: k.key }, "root_unknown_key_zz");
    expect(res.status).toBe(401);
    expect(res.error?.code).toBe("err:svc:authentication:key_not_found");
    await untouched(k.key);
  });

  it("answers a revoked root key with 401", async () => {
    const k = await metered();
    const root = await s.seed.rootKeyWithId([`api.${k.apiId}.verify_key`]);
    expect((await s.call(door, "keys.verifyKey", { key: k.key }, root.secret)).data.code).toBe(
      "VALID",
    );
    await s.seed.revokeRootKey(root.id);
    const res = await s.call(door, "keys.verifyKey", { key: k.key }, root.secret);
    expect(res.status).toBe(401);
    expect(res.error?.code).toBe("err:svc:authentication:key_not_found");
  });

  it("verifies with a root key allowed on the key's API, and without any header", async () => {
    const k = await s.seed.key({ name: "door key", meta: { door } });
    const right = await s.seed.rootKey([`api.${k.apiId}.verify_key`]);
    for (const auth of [right, null]) {
      const res = await s.call(door, "keys.verifyKey", { key: k.key }, auth);
      expect(res.status, JSON.stringify(res.error)).toBe(200);
      expect(res.requestId).toMatch(/^req_/);
      expect(res.data).toEqual({
        valid: true,
        code: "VALID",
        keyId: k.keyId,
        name: "door key",
        meta: { door },
        enabled: true,
      });
    }
  });
});

describe("keys.verifyKey with VERIFY_REQUIRES_ROOT_KEY=true", () => {
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startServer({ config: { verifyRequiresRootKey: true } });
  });
  afterAll(() => strict.stop());

  describe.each([...DOORS, ...MORE_DOORS])("via %s", (door) => {
    it("answers a request without a root key with 401 and spends nothing", async () => {
      const k = await strict.seed.key({ credits: { remaining: 3 } });
      const res = await strict.call(door, "keys.verifyKey", { key: k.key }, null);
      expect(res.status).toBe(401);
      expect(res.error?.code).toBe("err:svc:authentication:missing");
      const unknown = await strict.call(door, "keys.verifyKey", { key: "sk_unknown_x" }, null);
      expect(unknown.status).toBe(401);
      // Naming the key's API does not make the header-less form available again.
      const scoped = await strict.call(
        door,
        "keys.verifyKey",
        { key: k.key, apiId: k.apiId },
        null,
      );
      expect(scoped.status).toBe(401);
      expect(scoped.error?.code).toBe("err:svc:authentication:missing");
      const ok = await strict.call(door, "keys.verifyKey", { key: k.key });
      expect(ok.data).toMatchObject({ code: "VALID", credits: 2 });
    });
  });
});
