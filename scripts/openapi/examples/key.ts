import { IDS } from "./example.ts";
import { FORECAST_READ } from "./permissions.ts";

/** The identity the example key belongs to, as reads of a key show it. */
export const IDENTITY = {
  id: IDS.identityId,
  externalId: "acme_corp",
  meta: { company: "Acme Corp", plan: "pro" },
  ratelimits: [
    { id: "rl_4Vb7Nm1Qz9Xc3Lk5", name: "requests", limit: 1000, duration: 60000, autoApply: true },
  ],
  credits: { remaining: 50000, refill: { interval: "monthly", amount: 50000, refillDay: 1 } },
};

/** The limit the example key is created with, as reads of a key show it. */
const KEY_RATELIMIT = {
  id: "rl_8Pw2Ek6Rt0Yu4Io7",
  name: "requests",
  limit: 100,
  duration: 60000,
  autoApply: true,
};

/**
 * The example key as getKey, whoami and listKeys show it after its first verification (no
 * roles yet: keys.createKey's example names none, so that it needs only an API to exist).
 */
export const KEY = {
  keyId: IDS.keyId,
  start: IDS.key.slice(0, 7),
  enabled: true,
  createdAt: 1795861660691,
  name: "Acme Corp production",
  meta: { plan: "pro", region: "eu-west" },
  expires: 1924992000000,
  credits: { remaining: 999, refill: { interval: "monthly", amount: 1000, refillDay: 1 } },
  permissions: [FORECAST_READ.slug],
  identity: IDENTITY,
  ratelimits: [KEY_RATELIMIT],
};

/** What verifyKey answers for the example key: valid, with what the key carries. */
export const VERIFIED = {
  valid: true,
  code: "VALID",
  keyId: IDS.keyId,
  name: KEY.name,
  meta: KEY.meta,
  expires: KEY.expires,
  credits: 990,
  enabled: true,
  permissions: KEY.permissions,
  identity: {
    id: IDENTITY.id,
    externalId: IDENTITY.externalId,
    meta: IDENTITY.meta,
    credits: 49990,
  },
  ratelimits: [{ ...KEY_RATELIMIT, remaining: 99, reset: 1795861720000, exceeded: false }],
  reservationId: IDS.reservationId,
};
