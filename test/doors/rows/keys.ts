import { CODES, invalid, ok, type Row, refused } from "../row.js";
import { fullKey, hashOf, INSIDE, plainKey } from "./key-fixtures.js";

export const KEY_CREATION_ROWS: Row[] = [
  ok("keys.createKey", "a key with every setting", async (g) => {
    const apiId = await g.api();
    await g.role("reader", ["docs.read"]);
    return {
      body: {
        apiId,
        prefix: "cf",
        name: "every setting",
        byteLength: 24,
        externalId: "bob",
        meta: { plan: "pro", list: [1, "two", null] },
        roles: ["reader"],
        permissions: ["docs.write"],
        expires: 4_102_444_800_000,
        credits: { remaining: 10, refill: { interval: "daily", amount: 10 } },
        ratelimits: [{ name: "requests", limit: 10, duration: 1000, autoApply: false }],
        enabled: false,
      },
    };
  }),
  invalid(
    "keys.createKey",
    "a range with host bits set and one that is no address",
    ["/allowedCidrs/0", "/allowedCidrs/2"],
    async (g) => ({
      body: { apiId: await g.api(), allowedCidrs: ["10.0.0.1/8", "::/0", "ten"] },
    }),
  ),
  invalid(
    "keys.createKey",
    "a bad prefix and too few bytes",
    ["/prefix", "/byteLength"],
    async (g) => ({
      body: { apiId: await g.api(), prefix: "no spaces", byteLength: 8 },
    }),
  ),
  refused("keys.createKey", "an unknown role", 404, CODES.roleNotFound, async (g) => ({
    body: { apiId: await g.api(), roles: ["nobody"] },
  })),
  refused("keys.createKey", "a recoverable key", 412, CODES.precondition, async (g) => ({
    body: { apiId: await g.api(), recoverable: true },
  })),
  refused(
    "keys.createKey",
    "roles without the grant to add them",
    403,
    CODES.forbidden,
    async (g) => {
      await g.role("reader");
      return {
        body: { apiId: await g.api(), roles: ["reader"] },
        auth: await g.rootKeyWith(["api.*.create_key"]),
      };
    },
  ),

  ok("keys.migrateKeys", "imports one new hash and reports one taken", async (g) => {
    const apiId = await g.api();
    const taken = hashOf(g, "taken");
    await g.call("keys.migrateKeys", { migrationId: "first", apiId, keys: [{ hash: taken }] });
    return {
      body: {
        migrationId: "second",
        apiId,
        keys: [
          { hash: hashOf(g, "fresh"), name: "imported", credits: { remaining: 3 } },
          { hash: taken },
        ],
      },
    };
  }),
  invalid("keys.migrateKeys", "no keys", ["/keys"], async (g) => ({
    body: { migrationId: "none", apiId: await g.api(), keys: [] },
  })),
  refused("keys.migrateKeys", "an unknown API", 404, CODES.apiNotFound, async (g) => ({
    body: { migrationId: "lost", apiId: "api_unknown", keys: [{ hash: hashOf(g, "lost") }] },
  })),

  ok("keys.rerollKey", "replaces a key, the old one for a minute more", async (g) => {
    const { keyId } = await fullKey(g);
    return { body: { keyId, expiration: 60_000 } };
  }),
  invalid("keys.rerollKey", "a negative grace period", ["/expiration"], async (g) => ({
    body: { keyId: (await plainKey(g)).keyId, expiration: -1 },
  })),
  refused("keys.rerollKey", "an unknown key", 404, CODES.keyNotFound, async () => ({
    body: { keyId: "key_unknown", expiration: 0 },
  })),
];

export const KEY_READING_ROWS: Row[] = [
  ok("keys.verifyKey", "a valid key spending credits and a rate limit", async (g) => {
    const { key } = await fullKey(g);
    return {
      body: {
        key,
        clientIp: INSIDE,
        tags: ["path=/docs"],
        permissions: "docs.read AND (docs.write OR admin)",
        credits: { cost: 2 },
        ratelimits: [
          { name: "requests", cost: 1 },
          { name: "burst", limit: 3, duration: 1000 },
        ],
      },
    };
  }),
  ok("keys.verifyKey", "a key spending its own credits and its identity's pool", async (g) => {
    await g.call("identities.createIdentity", { externalId: "pooled", credits: { remaining: 9 } });
    const { key } = await g.key(await g.api(), {
      externalId: "pooled",
      credits: { remaining: 4 },
    });
    return { body: { key, credits: { cost: 3 } } };
  }),
  ok("keys.verifyKey", "a key whose identity's pool is short", async (g) => {
    await g.call("identities.createIdentity", { externalId: "spent", credits: { remaining: 1 } });
    const { key } = await g.key(await g.api(), { externalId: "spent" });
    return { body: { key, credits: { cost: 2 } } };
  }),
  ok("keys.verifyKey", "a reservation on a key and its identity's pool", async (g) => {
    await g.call("identities.createIdentity", { externalId: "held", credits: { remaining: 9 } });
    const { key } = await g.key(await g.api(), { externalId: "held", credits: { remaining: 8 } });
    return { body: { key, credits: { reserve: 5 } } };
  }),
  ok("keys.verifyKey", "a reservation the balance does not cover", async (g) => {
    const { key } = await g.key(await g.api(), { credits: { remaining: 4 } });
    return { body: { key, credits: { reserve: 5 } } };
  }),
  invalid("keys.verifyKey", "a reserve of 0", ["/credits/reserve"], async (g) => ({
    body: { key: (await plainKey(g)).key, credits: { reserve: 0 } },
  })),
  invalid("keys.verifyKey", "a cost and a reserve together", ["/credits/reserve"], async (g) => ({
    body: { key: (await plainKey(g)).key, credits: { cost: 1, reserve: 2 } },
  })),
  ok("keys.verifyKey", "a key without the permission asked for", async (g) => {
    const { key } = await fullKey(g);
    return { body: { key, clientIp: INSIDE, permissions: "admin" } };
  }),
  ok("keys.verifyKey", "a client outside the key's network ranges", async (g) => {
    const { key } = await fullKey(g);
    return { body: { key, clientIp: "192.0.2.1", credits: { cost: 2 } } };
  }),
  ok("keys.verifyKey", "no client address for a key with network ranges", async (g) => ({
    body: { key: (await fullKey(g)).key },
  })),
  invalid("keys.verifyKey", "a clientIp with a port", ["/clientIp"], async (g) => ({
    body: { key: (await plainKey(g)).key, clientIp: "10.0.0.1:443" },
  })),
  ok("keys.verifyKey", "an unknown key", async () => ({ body: { key: "cf_unknownKey" } })),
  ok("keys.verifyKey", "a repeat of an idempotencyKey answers the first call", async (g) => {
    const { key } = await g.key(await g.api(), { credits: { remaining: 10 } });
    const body = { key, credits: { cost: 2 }, idempotencyKey: "order-1" };
    await g.call("keys.verifyKey", body);
    return { body };
  }),
  refused(
    "keys.verifyKey",
    "an idempotencyKey used before with another body",
    409,
    "err:svc:data:idempotency_key_reused",
    async (g) => {
      const { key } = await g.key(await g.api(), { credits: { remaining: 10 } });
      await g.call("keys.verifyKey", { key, idempotencyKey: "order-1" });
      return { body: { key, credits: { cost: 3 }, idempotencyKey: "order-1" } };
    },
  ),
  invalid("keys.verifyKey", "an empty idempotencyKey", ["/idempotencyKey"], async (g) => ({
    body: { key: (await plainKey(g)).key, idempotencyKey: "" },
  })),
  refused(
    "keys.verifyKey",
    "a permissions query that does not parse",
    400,
    "err:svc:bad_request:permissions_query_syntax_error",
    async (g) => ({ body: { key: (await plainKey(g)).key, permissions: "docs.read AND (" } }),
  ),
  invalid("keys.verifyKey", "a negative cost", ["/credits/cost"], async (g) => ({
    body: { key: (await plainKey(g)).key, credits: { cost: -1 } },
  })),

  ok("keys.getKey", "a key with every setting", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId },
  })),
  refused("keys.getKey", "an unknown key", 404, CODES.keyNotFound, async () => ({
    body: { keyId: "key_unknown" },
  })),
  refused("keys.getKey", "the secret asked for", 412, CODES.precondition, async (g) => ({
    body: { keyId: (await plainKey(g)).keyId, decrypt: true },
  })),

  ok("keys.whoami", "the key of a secret", async (g) => ({
    body: { key: (await fullKey(g)).key },
  })),
  refused("keys.whoami", "an unknown secret", 404, CODES.keyNotFound, async () => ({
    body: { key: "cf_unknownKey" },
  })),
  invalid("keys.whoami", "a secret over 512 characters", ["/key"], async () => ({
    body: { key: `cf_${"x".repeat(510)}` },
  })),
];
