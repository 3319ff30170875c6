import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileCidrs } from "../../../src/domain/networks.js";
import { useServer } from "../../harness/server.js";
import { type Asked, askerOf, gatewayOf } from "./ask.js";

// The forward-auth endpoint, /v2/gateway/authorize, as a gateway calls it: its root key in
// X-Latchkey-Root-Key, its policy in X-Latchkey-* headers, the end user's key and the
// original request's headers as they came. Every status, every header, and the bounds.

const s = useServer({
  config: {
    trustedProxies: compileCidrs(["127.0.0.1", "::1", "10.0.0.0/8"]),
    gatewayKeyHeader: "x-acme-key",
  },
});
const ask = askerOf(s);

const body = (a: Asked) =>
  a.json as { error: Record<string, unknown>; meta: { requestId: string } };

describe("an allowed request", () => {
  it("is 200 with the key's id, identity and metadata for the upstream, and no body", async () => {
    const g = await gatewayOf(s);
    const meta = { plan: "pro", seats: 3, nested: { ok: true } };
    const k = await s.seed.key({ apiId: g.apiId, externalId: "acme_corp", meta });
    const a = await ask(g, { authorization: `Bearer ${k.key}` });
    expect(a.status).toBe(200);
    expect(a.text).toBe("");
    expect(a.headers.get("x-latchkey-key-id")).toBe(k.keyId);
    expect(a.headers.get("x-latchkey-identity")).toBe("acme_corp");
    const encoded = a.headers.get("x-latchkey-meta") as string;
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(encoded, "base64url").toString())).toEqual(meta);
    expect(a.headers.get("x-latchkey-code")).toBe("VALID");
    expect(a.headers.get("x-request-id")).toMatch(/^req_/);
    expect(a.headers.get("x-envoy-auth-headers-to-remove")).toBe("x-latchkey-meta-omitted");
    expect(a.headers.get("ratelimit")).toBeNull();
  });

  it("reads the key from X-API-Key and from GATEWAY_KEY_HEADER, the configured header first", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const other = await s.seed.key({ apiId: g.apiId });
    expect((await ask(g, { "x-api-key": k.key })).headers.get("x-latchkey-key-id")).toBe(k.keyId);
    const both = await ask(g, { "x-acme-key": other.key, authorization: `Bearer ${k.key}` });
    expect(both.headers.get("x-latchkey-key-id")).toBe(other.keyId);
    const bearerFirst = await ask(g, { authorization: `Bearer ${k.key}`, "x-api-key": other.key });
    expect(bearerFirst.headers.get("x-latchkey-key-id")).toBe(k.keyId);
  });

  it("leaves out the identity and metadata headers a key has none of, naming them for Envoy", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const a = await ask(g, { authorization: `Bearer ${k.key}` });
    expect(a.headers.get("x-latchkey-identity")).toBeNull();
    expect(a.headers.get("x-latchkey-meta")).toBeNull();
    expect(a.headers.get("x-envoy-auth-headers-to-remove")).toBe(
      "x-latchkey-identity, x-latchkey-meta, x-latchkey-meta-omitted",
    );
  });

  it("omits a metadata over 2048 characters encoded, and says so", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId, meta: { blob: "x".repeat(1600) } });
    const a = await ask(g, { authorization: `Bearer ${k.key}` });
    expect(a.status).toBe(200);
    expect(a.headers.get("x-latchkey-meta")).toBeNull();
    expect(a.headers.get("x-latchkey-meta-omitted")).toBe("too-large");
    const fits = await s.seed.key({ apiId: g.apiId, meta: { blob: "x".repeat(1500) } });
    const b = await ask(g, { authorization: `Bearer ${fits.key}` });
    expect((b.headers.get("x-latchkey-meta") as string).length).toBeLessThanOrEqual(2048);
  });

  it("accepts any method and the paths below the endpoint (Envoy's HTTP ext_authz)", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
      const a = await ask(
        g,
        { authorization: `Bearer ${k.key}` },
        { method, path: "/orders/7?x=1" },
      );
      expect([method, a.status]).toEqual([method, 200]);
    }
    const head = await ask(g, { authorization: `Bearer ${k.key}` }, { method: "HEAD" });
    expect([head.status, head.headers.get("x-latchkey-key-id")]).toEqual([200, k.keyId]);
  });
});

describe("a refused request", () => {
  it("without a key is 401 KEY_MISSING, with WWW-Authenticate and a small JSON body", async () => {
    const g = await gatewayOf(s);
    const a = await ask(g, {});
    expect(a.status).toBe(401);
    expect(a.headers.get("www-authenticate")).toBe('Bearer realm="latchkey"');
    expect(a.headers.get("content-type")).toBe("application/json");
    expect(a.headers.get("x-latchkey-code")).toBe("KEY_MISSING");
    expect(a.json).toEqual({
      meta: { requestId: a.headers.get("x-request-id") },
      error: {
        status: 401,
        title: "Unauthorized",
        code: "KEY_MISSING",
        detail: "No API key was sent.",
      },
    });
    for (const h of ["x-latchkey-key-id", "x-latchkey-identity", "x-latchkey-meta"]) {
      expect(a.headers.get(h)).toBeNull();
    }
  });

  const keyOf = {
    unknown: async () => "lk_unknown_key",
    tooLong: async () => "k".repeat(513),
    disabled: async (apiId: string) => (await s.seed.key({ apiId, enabled: false })).key,
    expired: async (apiId: string) => (await s.seed.key({ apiId, expires: 1 })).key,
    otherApi: async () => (await s.seed.key({})).key,
    outside: async (apiId: string) =>
      (await s.seed.key({ apiId, allowedCidrs: ["192.0.2.0/24"] })).key,
  };
  it.each([
    ["an unknown key", 401, "NOT_FOUND", keyOf.unknown],
    ["a key longer than any key", 401, "NOT_FOUND", keyOf.tooLong],
    ["a disabled key", 401, "DISABLED", keyOf.disabled],
    ["an expired key", 401, "EXPIRED", keyOf.expired],
    ["a key of another API", 401, "NOT_FOUND", keyOf.otherApi],
    ["a key used from outside its network ranges", 403, "FORBIDDEN", keyOf.outside],
  ])("%s is %i %s", async (_, status, code, key) => {
    const g = await gatewayOf(s);
    const a = await ask(g, { authorization: `Bearer ${await key(g.apiId)}` });
    expect([a.status, a.headers.get("x-latchkey-code"), body(a).error.code]).toEqual([
      status,
      code,
      code,
    ]);
    expect(body(a).error.status).toBe(status);
  });

  it("a key without the permissions the policy asks for is 403", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId, permissions: ["docs.read"] });
    const auth = { authorization: `Bearer ${k.key}` };
    expect((await ask(g, { ...auth, "x-latchkey-permissions": "docs.read" })).status).toBe(200);
    const a = await ask(g, { ...auth, "x-latchkey-permissions": "docs.read AND docs.write" });
    expect([a.status, body(a).error.code]).toEqual([403, "INSUFFICIENT_PERMISSIONS"]);
    expect(a.headers.get("www-authenticate")).toBeNull();
  });

  it("rate limits answer the RateLimit fields, and 429 with Retry-After once exhausted", async () => {
    s.clock.set(Date.parse("2026-10-01T10:00:30Z"));
    const g = await gatewayOf(s);
    const k = await s.seed.key({
      apiId: g.apiId,
      ratelimits: [{ name: "requests", limit: 100, duration: 3_600_000, autoApply: true }],
    });
    const headers = {
      authorization: `Bearer ${k.key}`,
      "x-latchkey-ratelimits": "burst;limit=2;duration=60000, requests;cost=10",
    };
    const first = await ask(g, headers);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"requests";q=100;w=3600, "burst";q=2;w=60');
    expect(first.headers.get("ratelimit")).toBe('"requests";r=90;t=3570, "burst";r=1;t=30');
    expect(first.headers.get("retry-after")).toBeNull();
    await ask(g, headers);
    const refused = await ask(g, headers);
    expect([refused.status, body(refused).error.code]).toEqual([429, "RATE_LIMITED"]);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.headers.get("ratelimit")).toBe('"requests";r=80;t=3570, "burst";r=0;t=30');
    expect(refused.headers.get("www-authenticate")).toBeNull();
  });

  it("credits: the policy's cost is spent, and an empty balance is 429 USAGE_EXCEEDED, no Retry-After", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId, credits: { remaining: 5 } });
    const auth = { authorization: `Bearer ${k.key}` };
    expect((await ask(g, { ...auth, "x-latchkey-cost": "3" })).status).toBe(200);
    expect((await ask(g, { ...auth, "x-latchkey-cost": "0" })).status).toBe(200);
    const a = await ask(g, { ...auth, "x-latchkey-cost": "3" });
    expect([a.status, body(a).error.code]).toEqual([429, "USAGE_EXCEEDED"]);
    expect(a.headers.get("retry-after")).toBeNull();
    expect((await s.api.keys.getKey({ keyId: k.keyId })).data?.credits?.remaining).toBe(2n);
  });

  it("a refusal before the limits (FORBIDDEN) spends neither credits nor tokens", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({
      apiId: g.apiId,
      credits: { remaining: 5 },
      allowedCidrs: ["192.0.2.0/24"],
      ratelimits: [{ name: "requests", limit: 3, duration: 3_600_000, autoApply: true }],
    });
    const a = await ask(g, { authorization: `Bearer ${k.key}`, "x-latchkey-cost": "2" });
    expect(a.status).toBe(403);
    expect(a.headers.get("ratelimit")).toBeNull();
    expect((await s.api.keys.getKey({ keyId: k.keyId })).data?.credits?.remaining).toBe(5n);
    const probe = await s.api.keys.verifyKey({
      key: k.key,
      clientIp: "192.0.2.1",
      credits: { cost: 0n },
    });
    expect(probe.data?.ratelimits[0]?.remaining).toBe(2n);
  });
});

describe("the gateway's root key", () => {
  it("is required: none is 401 before anything else, even a malformed policy", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const a = await ask(
      { ...g, rootKey: undefined },
      { authorization: `Bearer ${k.key}`, "x-latchkey-cost": "-1" },
    );
    expect(a.status).toBe(401);
    expect(body(a).error.type).toContain("authentication/missing");
    expect(body(a).error.detail).toContain("X-Latchkey-Root-Key");
    expect(a.headers.get("x-latchkey-key-id")).toBeNull();
  });

  it("unknown or revoked is 401 key_not_found", async () => {
    const g = await gatewayOf(s);
    const a = await ask({ ...g, rootKey: "not_a_root_key_at_all" }, {});
    expect([a.status, body(a).error.type]).toEqual([
      401,
      expect.stringContaining("authentication/key_not_found"),
    ]);
    const { id, secret } = await s.seed.rootKeyWithId([`api.${g.apiId}.verify_key`]);
    await s.seed.revokeRootKey(id);
    expect((await ask({ ...g, rootKey: secret }, {})).status).toBe(401);
  });

  it("without api.<apiId>.verify_key for the policy's API is 403 naming it", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    for (const grant of [
      [`api.${await s.seed.api()}.verify_key`],
      [`api.${g.apiId}.read_key`],
      ["api.*.create_key"],
    ]) {
      const rootKey = await s.seed.rootKey(grant);
      const a = await ask({ ...g, rootKey }, { authorization: `Bearer ${k.key}` });
      expect(a.status).toBe(403);
      expect(body(a).error.detail).toBe(`Missing permission: 'api.${g.apiId}.verify_key'.`);
    }
    const wildcard = await s.seed.rootKey(["api.*.verify_key"]);
    expect(
      (await ask({ ...g, rootKey: wildcard }, { authorization: `Bearer ${k.key}` })).status,
    ).toBe(200);
  });

  it("is checked before the end user's key: a missing key with a bad grant is 403", async () => {
    const g = await gatewayOf(s);
    const rootKey = await s.seed.rootKey(["api.*.read_api"]);
    expect((await ask({ ...g, rootKey }, {})).status).toBe(403);
  });
});

describe("the policy headers", () => {
  it.each([
    [{ "x-latchkey-api-id": "" }, "X-Latchkey-Api-Id", "is required"],
    [{ "x-latchkey-api-id": "api-with-dashes" }, "X-Latchkey-Api-Id", "must be an API id"],
    [{ "x-latchkey-cost": "-1" }, "X-Latchkey-Cost", "whole number from 0 to 1000000000000"],
    [{ "x-latchkey-cost": "1.5" }, "X-Latchkey-Cost", "whole number"],
    [{ "x-latchkey-cost": "1000000000001" }, "X-Latchkey-Cost", "whole number"],
    [{ "x-latchkey-cost": "01" }, "X-Latchkey-Cost", "whole number"],
    [
      { "x-latchkey-permissions": "docs.read AND" },
      "X-Latchkey-Permissions",
      "is not a permissions query",
    ],
    [
      { "x-latchkey-permissions": `a${" OR a".repeat(200)}` },
      "X-Latchkey-Permissions",
      "at most 1000",
    ],
    [{ "x-latchkey-ratelimits": "ab" }, "X-Latchkey-Ratelimits", "item 0"],
    [
      { "x-latchkey-ratelimits": "burst;limit=5" },
      "X-Latchkey-Ratelimits",
      "needs both limit and duration",
    ],
    [{ "x-latchkey-ratelimits": "burst;colour=5" }, "X-Latchkey-Ratelimits", "unknown parameter"],
    [
      { "x-latchkey-ratelimits": "burst;cost=1;cost=2" },
      "X-Latchkey-Ratelimits",
      "cost is given twice",
    ],
    [
      { "x-latchkey-ratelimits": "burst;cost" },
      "X-Latchkey-Ratelimits",
      "cost must be a whole number",
    ],
    [
      { "x-latchkey-ratelimits": "burst;limit=5;duration=999" },
      "X-Latchkey-Ratelimits",
      "duration must be",
    ],
    [{ "x-latchkey-ratelimits": "a1b,,c2d" }, "X-Latchkey-Ratelimits", "item 1 is empty"],
    [
      { "x-latchkey-ratelimits": Array.from({ length: 101 }, (_, i) => `lim${i}`).join(",") },
      "X-Latchkey-Ratelimits",
      "at most 100 limits",
    ],
    [
      { "x-latchkey-ratelimits": `${"x".repeat(8193)}` },
      "X-Latchkey-Ratelimits",
      "at most 8192 characters",
    ],
  ])("%j is 400 naming %s", async (headers, location, message) => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const a = await ask(g, { authorization: `Bearer ${k.key}`, ...headers });
    expect(a.status).toBe(400);
    const errors = body(a).error.errors as { location: string; message: string }[];
    expect(errors[0]?.location).toBe(location);
    expect(errors[0]?.message).toContain(message);
    expect(body(a).error.detail).toContain(location);
  });

  it("reports every malformed header at once", async () => {
    const g = await gatewayOf(s);
    const a = await ask(g, { "x-latchkey-cost": "x", "x-latchkey-ratelimits": "b" });
    expect((body(a).error.errors as { location: string }[]).map((e) => e.location)).toEqual([
      "X-Latchkey-Cost",
      "X-Latchkey-Ratelimits",
    ]);
  });

  it("a limit the key does not have, named without limit and duration, is 412", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const a = await ask(g, {
      authorization: `Bearer ${k.key}`,
      "x-latchkey-ratelimits": "nosuchlimit",
    });
    expect([a.status, body(a).error.type]).toEqual([
      412,
      expect.stringContaining("precondition_failed"),
    ]);
  });
});

describe("the original request", () => {
  it("names the verification event with its method and path, without the query string", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const auth = { authorization: `Bearer ${k.key}` };
    await ask(g, {
      ...auth,
      "x-forwarded-method": "PUT",
      "x-forwarded-uri": "/orders/1?token=secret",
    });
    await ask(g, { ...auth, "x-original-method": "DELETE", "x-original-uri": "/orders/2" });
    await ask(g, auth, { method: "PATCH", path: "/orders/3?q=1" });
    await s.app.deps.events.flush();
    const rows = await s.db.query<{ tags: string[] }>(
      "select tags from key_verifications where key_id = $1 order by time, request_id",
      [k.keyId],
    );
    expect(rows.map((r) => [...r.tags].sort())).toEqual(
      expect.arrayContaining([
        ["method=PUT", "path=/orders/1"],
        ["method=DELETE", "path=/orders/2"],
        ["method=PATCH", "path=/orders/3"],
      ]),
    );
    expect(rows).toHaveLength(3);
  });
});

describe("the client address", () => {
  const ranged = async (g: Awaited<ReturnType<typeof gatewayOf>>) =>
    (await s.seed.key({ apiId: g.apiId, allowedCidrs: ["203.0.113.0/24", "2001:db8::/32"] })).key;

  it.each([
    ["the client a trusted proxy appended", "203.0.113.9", 200],
    ["through several trusted proxies", "203.0.113.9, 10.0.0.5, 10.9.9.9", 200],
    [
      "the first untrusted hop from the right, not what the client wrote",
      "203.0.113.9, 198.51.100.7",
      403,
    ],
    ["a port written by a proxy", "203.0.113.9:51234", 200],
    ["an IPv6 entry with a port", "[2001:db8::1]:443, 10.0.0.1", 200],
    ["an IPv6 entry", "2001:db8::1", 200],
    ["an entry that is no address", "203.0.113.9, garbage", 403],
  ])("%s (X-Forwarded-For: %s) is %i", async (_, xff, status) => {
    const g = await gatewayOf(s);
    const a = await ask(g, { authorization: `Bearer ${await ranged(g)}`, "x-forwarded-for": xff });
    expect(a.status).toBe(status);
  });

  it("with no X-Forwarded-For is the peer", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId, allowedCidrs: ["127.0.0.0/8", "::1"] });
    expect((await ask(g, { authorization: `Bearer ${k.key}` })).status).toBe(200);
  });
});

describe("the client address without trusted proxies", () => {
  const plain = useServer();
  const askPlain = askerOf(plain);
  it("ignores X-Forwarded-For: the client is the peer", async () => {
    const g = await gatewayOf(plain);
    const k = await plain.seed.key({ apiId: g.apiId, allowedCidrs: ["203.0.113.0/24"] });
    const a = await askPlain(g, {
      authorization: `Bearer ${k.key}`,
      "x-forwarded-for": "203.0.113.9",
    });
    expect(a.status).toBe(403);
    const local = await plain.seed.key({ apiId: g.apiId, allowedCidrs: ["127.0.0.0/8", "::1"] });
    const b = await askPlain(g, {
      authorization: `Bearer ${local.key}`,
      "x-forwarded-for": "203.0.113.9",
    });
    expect(b.status).toBe(200);
  });
});

describe("any policy and forwarded headers", () => {
  it("are answered with an outcome or a catalog error, never a 5xx", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId, credits: { remaining: 1_000_000 } });
    const printable = fc.string({
      unit: fc.constantFrom(..." !\"#%&'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~".split("")),
      maxLength: 60,
    });
    const value = fc.oneof(printable, fc.constantFrom("", "0", "1", "a1b;limit=1;duration=1000"));
    const headers = fc.record(
      {
        "x-latchkey-cost": value,
        "x-latchkey-permissions": value,
        "x-latchkey-ratelimits": value,
        "x-forwarded-for": value,
        "x-forwarded-uri": value,
        "x-forwarded-method": value,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(headers, async (h) => {
        const a = await ask(g, { authorization: `Bearer ${k.key}`, ...h });
        expect([200, 400, 401, 403, 412, 429], JSON.stringify(h)).toContain(a.status);
      }),
      { numRuns: 150 },
    );
  });
});
