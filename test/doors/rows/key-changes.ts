import { CODES, invalid, ok, type Row, refused } from "../row.js";
import { fullKey, INSIDE, plainKey } from "./key-fixtures.js";

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
        allowedCidrs: null,
      },
    };
  }),
  ok("keys.updateKey", "replaces the network ranges", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, allowedCidrs: ["192.0.2.0/24"] },
  })),
  invalid("keys.updateKey", "101 network ranges", ["/allowedCidrs"], async (g) => ({
    body: {
      keyId: (await plainKey(g)).keyId,
      allowedCidrs: Array.from({ length: 101 }, (_, i) => `10.${i}.0.0/16`),
    },
  })),
  invalid("keys.updateKey", "an empty name", ["/name"], async (g) => ({
    body: { keyId: (await plainKey(g)).keyId, name: "" },
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
      body: { keyId: (await plainKey(g)).keyId, roles: [] },
      auth: await g.rootKeyWith(["api.*.update_key"]),
    }),
  ),

  ok("keys.updateCredits", "increments the balance", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, operation: "increment", value: 5 },
  })),
  ok("keys.updateCredits", "makes the key unlimited", async (g) => ({
    body: { keyId: (await plainKey(g)).keyId, operation: "set", value: null },
  })),
  invalid("keys.updateCredits", "a negative value", ["/value"], async (g) => ({
    body: { keyId: (await plainKey(g)).keyId, operation: "set", value: -1 },
  })),
  refused("keys.updateCredits", "an unknown key", 404, CODES.keyNotFound, async () => ({
    body: { keyId: "key_unknown", operation: "increment", value: 1 },
  })),
  refused(
    "keys.updateCredits",
    "an idempotencyKey used before with another body",
    409,
    "err:svc:data:idempotency_key_reused",
    async (g) => {
      const { keyId } = await fullKey(g);
      await g.call("keys.updateCredits", {
        keyId,
        operation: "increment",
        value: 1,
        idempotencyKey: "k",
      });
      return { body: { keyId, operation: "increment", value: 2, idempotencyKey: "k" } };
    },
  ),

  ok("keys.settleCredits", "gives back what a reservation did not use", async (g) => {
    const { key } = await fullKey(g);
    const held = await g.call("keys.verifyKey", {
      key,
      clientIp: INSIDE,
      credits: { reserve: 6 },
    });
    return { body: { reservationId: held.reservationId, used: 2 } };
  }),
  ok("keys.settleCredits", "reports the extra a balance cannot cover as shortfall", async (g) => {
    const { key } = await fullKey(g);
    const held = await g.call("keys.verifyKey", {
      key,
      clientIp: INSIDE,
      credits: { reserve: 6 },
    });
    return { body: { reservationId: held.reservationId, used: 20 } };
  }),
  invalid("keys.settleCredits", "a malformed reservationId", ["/reservationId"], async () => ({
    body: { reservationId: "reservation-1", used: 1 },
  })),
  refused(
    "keys.settleCredits",
    "an unknown reservation",
    404,
    "err:svc:data:reservation_not_found",
    async () => ({ body: { reservationId: "res_0000000000000000", used: 1 } }),
  ),

  ok("keys.deleteKey", "deletes a key for good", async (g) => ({
    body: { keyId: (await plainKey(g)).keyId, permanent: true },
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
    body: { keyId: (await plainKey(g)).keyId, permissions: ["no spaces"] },
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
      body: { keyId: (await plainKey(g)).keyId, permissions: ["docs.unknown"] },
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
    body: { keyId: (await plainKey(g)).keyId, roles: ["nobody"] },
  })),

  ok("keys.removeRoles", "removes a role", async (g) => ({
    body: { keyId: (await fullKey(g)).keyId, roles: ["reader"] },
  })),
  invalid("keys.removeRoles", "no roles", ["/roles"], async (g) => ({
    body: { keyId: (await plainKey(g)).keyId, roles: [] },
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
      body: { keyId: (await plainKey(g)).keyId, roles: [] },
      auth: await g.rootKeyWith(["api.*.update_key", "rbac.*.add_role_to_key"]),
    }),
  ),
];
