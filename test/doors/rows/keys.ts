import { createHash } from "node:crypto";
import type { Given } from "../given.js";
import { CODES, invalid, ok, type Row, refused } from "../row.js";

/** Every setting a key can have, so that reading it shows each field's encoding on every door. */
async function fullKey(g: Given) {
  const apiId = await g.api();
  await g.role("reader", ["docs.read"]);
  const created = await g.key(apiId, {
    name: "full",
    externalId: "alice",
    meta: { plan: "pro", seats: 3, tags: ["a", "b"], nested: { on: true, off: null } },
    roles: ["reader"],
    permissions: ["docs.write"],
    expires: g.now + 86_400_000,
    credits: { remaining: 10, refill: { interval: "monthly", amount: 20, refillDay: 3 } },
    ratelimits: [{ name: "requests", limit: 5, duration: 60_000, autoApply: true }],
  });
  return { apiId, ...created };
}

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
    body: { keyId: (await g.key(await g.api())).keyId, expiration: -1 },
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
  ok("keys.verifyKey", "a key without the permission asked for", async (g) => {
    const { key } = await fullKey(g);
    return { body: { key, permissions: "admin" } };
  }),
  ok("keys.verifyKey", "an unknown key", async () => ({ body: { key: "cf_unknownKey" } })),
  refused(
    "keys.verifyKey",
    "a permissions query that does not parse",
    400,
    "err:svc:bad_request:permissions_query_syntax_error",
    async (g) => ({ body: { key: (await fullKey(g)).key, permissions: "docs.read AND (" } }),
  ),
  invalid("keys.verifyKey", "a negative cost", ["/credits/cost"], async (g) => ({
    body: { key: (await fullKey(g)).key, credits: { cost: -1 } },
  })),

  ok("keys.getKey", "a key with every setting", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId },
  })),
  refused("keys.getKey", "an unknown key", 404, CODES.keyNotFound, async () => ({
    body: { keyId: "key_unknown" },
  })),
  refused("keys.getKey", "the secret asked for", 412, CODES.precondition, async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, decrypt: true },
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

export const KEY_UPDATE_ROWS: Row[] = [
  ok("keys.updateKey", "sets some settings and clears others", async (g) => {
    const { keyId } = await fullKey(g);
    await g.role("writer", ["docs.write"]);
    return {
      body: {
        keyId,
        name: "renamed",
        externalId: null,
        meta: { plan: "team" },
        expires: null,
        credits: { remaining: 7 },
        ratelimits: [{ name: "requests", limit: 50, duration: 1000 }],
        enabled: false,
        roles: ["writer"],
        permissions: [],
      },
    };
  }),
  invalid("keys.updateKey", "an empty name", ["/name"], async (g) => ({
    body: { keyId: (await g.key(await g.api())).keyId, name: "" },
  })),
  refused("keys.updateKey", "an unknown key", 404, CODES.keyNotFound, async () => ({
    body: { keyId: "key_unknown", name: "nobody" },
  })),
  refused(
    "keys.updateKey",
    "roles without the grants to change them",
    403,
    CODES.forbidden,
    async (g) => ({
      body: { keyId: (await g.key(await g.api())).keyId, roles: [] },
      auth: await g.rootKeyWith(["api.*.update_key"]),
    }),
  ),

  ok("keys.updateCredits", "increments the balance", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, operation: "increment", value: 5 },
  })),
  ok("keys.updateCredits", "makes the key unlimited", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, operation: "set", value: null },
  })),
  invalid("keys.updateCredits", "a negative value", ["/value"], async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, operation: "set", value: -1 },
  })),
  refused("keys.updateCredits", "an unknown key", 404, CODES.keyNotFound, async () => ({
    body: { keyId: "key_unknown", operation: "increment", value: 1 },
  })),

  ok("keys.deleteKey", "deletes a key for good", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, permanent: true },
  })),
  refused("keys.deleteKey", "a key deleted before", 404, CODES.keyNotFound, async (g) => {
    const { keyId } = await g.key(await g.api());
    await g.call("keys.deleteKey", { keyId });
    return { body: { keyId } };
  }),
];

export const KEY_GRANT_ROWS: Row[] = [
  ok("keys.addPermissions", "adds an existing and a new permission", async (g) => {
    await g.permission("docs.delete");
    return { body: { keyId: (await fullKey(g)).keyId, permissions: ["docs.delete", "docs.new"] } };
  }),
  invalid("keys.addPermissions", "a slug with a space", ["/permissions/0"], async (g) => ({
    body: { keyId: (await g.key(await g.api())).keyId, permissions: ["no spaces"] },
  })),
  refused("keys.addPermissions", "an unknown key", 404, CODES.keyNotFound, async () => ({
    body: { keyId: "key_unknown", permissions: ["docs.read"] },
  })),

  ok("keys.removePermissions", "removes a direct permission", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, permissions: ["docs.write"] },
  })),
  refused(
    "keys.removePermissions",
    "an unknown permission",
    404,
    CODES.permissionNotFound,
    async (g) => ({
      body: { keyId: (await fullKey(g)).keyId, permissions: ["docs.unknown"] },
    }),
  ),

  ok("keys.setPermissions", "replaces the direct permissions", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, permissions: ["docs.read", "docs.other"] },
  })),
  refused("keys.setPermissions", "an unknown key", 404, CODES.keyNotFound, async () => ({
    body: { keyId: "key_unknown", permissions: [] },
  })),

  ok("keys.addRoles", "adds a role", async (g) => {
    await g.role("admin", ["docs.admin"]);
    return { body: { keyId: (await fullKey(g)).keyId, roles: ["admin"] } };
  }),
  refused("keys.addRoles", "an unknown role", 404, CODES.roleNotFound, async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, roles: ["nobody"] },
  })),

  ok("keys.removeRoles", "removes a role", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, roles: ["reader"] },
  })),
  invalid("keys.removeRoles", "no roles", ["/roles"], async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, roles: [] },
  })),

  ok("keys.setRoles", "replaces the roles", async (g) => {
    await g.role("admin", ["docs.admin"]);
    return { body: { keyId: (await fullKey(g)).keyId, roles: ["admin"] } };
  }),
  refused(
    "keys.setRoles",
    "without the grant to remove roles",
    403,
    CODES.forbidden,
    async (g) => ({
      body: { keyId: (await fullKey(g)).keyId, roles: [] },
      auth: await g.rootKeyWith(["api.*.update_key", "rbac.*.add_role_to_key"]),
    }),
  ),
];

/** The SHA-256 (hex) of a secret unique to this setup, registered as a placeholder. */
function hashOf(g: Given, label: string): string {
  const hash = createHash("sha256").update(`${g.workspaceId}:${label}`).digest("hex");
  g.know("hash", hash);
  return hash;
}
