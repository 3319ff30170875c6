import { type Examples, IDS } from "./example.ts";
import { KEY, VERIFIED } from "./key.ts";
import { FORECAST_HISTORY, FORECAST_READ, READER_ROLE } from "./permissions.ts";

/** Examples of the keys namespace. */
export const KEY_EXAMPLES: Examples = {
  "keys.createKey": {
    request: {
      apiId: IDS.apiId,
      prefix: "wx",
      name: "Acme Corp production",
      externalId: "acme_corp",
      meta: { plan: "pro", region: "eu-west" },
      permissions: ["forecast.read"],
      expires: 1924992000000,
      credits: { remaining: 1000, refill: { interval: "monthly", amount: 1000, refillDay: 1 } },
      ratelimits: [{ name: "requests", limit: 100, duration: 60000, autoApply: true }],
      enabled: true,
    },
    response: { data: { keyId: IDS.keyId, key: IDS.key } },
  },
  "keys.verifyKey": {
    request: {
      key: IDS.key,
      permissions: "forecast.read",
      tags: ["path=/v1/forecast"],
      credits: { reserve: 10 },
      clientIp: "203.0.113.7",
    },
    response: { data: VERIFIED },
  },
  "keys.settleCredits": {
    request: { reservationId: IDS.reservationId, used: 7 },
    response: {
      data: {
        reservationId: IDS.reservationId,
        reserved: 10,
        used: 7,
        refunded: 3,
        shortfall: 0,
        remaining: 993,
        identityRemaining: 49993,
        expired: false,
      },
    },
  },
  "keys.whoami": {
    request: { key: IDS.key },
    response: { data: KEY },
  },
  "keys.getKey": {
    request: { keyId: IDS.keyId },
    response: { data: KEY },
  },
  "keys.updateKey": {
    request: {
      keyId: IDS.keyId,
      name: "Acme Corp production (EU)",
      meta: { plan: "enterprise", region: "eu-west" },
      ratelimits: [{ name: "requests", limit: 500, duration: 60000, autoApply: true }],
    },
    response: { data: {} },
  },
  "keys.updateCredits": {
    request: { keyId: IDS.keyId, operation: "increment", value: 500, idempotencyKey: "topup-8841" },
    response: { data: { remaining: 1499, refill: KEY.credits.refill } },
  },
  "keys.addPermissions": {
    request: { keyId: IDS.keyId, permissions: ["forecast.history"] },
    response: { data: [FORECAST_HISTORY, FORECAST_READ] },
  },
  "keys.removePermissions": {
    request: { keyId: IDS.keyId, permissions: ["forecast.history"] },
    response: { data: [FORECAST_READ] },
  },
  "keys.setPermissions": {
    request: { keyId: IDS.keyId, permissions: ["forecast.read", "forecast.history"] },
    response: { data: [FORECAST_HISTORY, FORECAST_READ] },
  },
  "keys.addRoles": {
    request: { keyId: IDS.keyId, roles: ["forecast-reader"] },
    response: { data: [READER_ROLE] },
  },
  "keys.removeRoles": {
    request: { keyId: IDS.keyId, roles: ["forecast-reader"] },
    response: { data: [] },
  },
  "keys.setRoles": {
    request: { keyId: IDS.keyId, roles: ["forecast-reader"] },
    response: { data: [READER_ROLE] },
  },
  "keys.migrateKeys": {
    request: {
      migrationId: "legacy-gateway-2026",
      apiId: IDS.apiId,
      keys: [
        {
          hash: "b1a2f0c3d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2",
          name: "Legacy key of Globex",
          externalId: "globex",
          credits: { remaining: 250 },
        },
      ],
    },
    response: {
      data: {
        migrated: [
          {
            hash: "b1a2f0c3d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2",
            keyId: IDS.migratedKeyId,
          },
        ],
        failed: [],
      },
    },
  },
  "keys.rerollKey": {
    request: { keyId: IDS.keyId, expiration: 3600000 },
    response: { data: { keyId: IDS.rerolledKeyId, key: IDS.rerolledKey } },
  },
  "keys.deleteKey": {
    request: { keyId: IDS.keyId },
    response: { data: {} },
  },
};
