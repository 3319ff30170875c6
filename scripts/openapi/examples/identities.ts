import { type Examples, IDS } from "./example.ts";
import { IDENTITY } from "./key.ts";

/** Examples of the identities namespace. */
export const IDENTITY_EXAMPLES: Examples = {
  "identities.createIdentity": {
    request: {
      externalId: "acme_corp",
      meta: { company: "Acme Corp", plan: "pro" },
      ratelimits: [{ name: "requests", limit: 1000, duration: 60000 }],
      credits: IDENTITY.credits,
    },
    response: { data: { identityId: IDS.identityId } },
  },
  "identities.getIdentity": {
    request: { externalId: "acme_corp" },
    response: { data: IDENTITY },
  },
  "identities.listIdentities": {
    request: { limit: 10 },
    response: { data: [IDENTITY], pagination: { hasMore: false } },
  },
  "identities.updateIdentity": {
    request: {
      identity: IDS.identityId,
      meta: { company: "Acme Corp", plan: "enterprise" },
      ratelimits: [{ name: "requests", limit: 5000, duration: 60000 }],
      credits: { remaining: 200000, refill: { interval: "monthly", amount: 200000, refillDay: 1 } },
    },
    response: {
      data: {
        ...IDENTITY,
        meta: { company: "Acme Corp", plan: "enterprise" },
        ratelimits: IDENTITY.ratelimits.map((limit) => ({ ...limit, limit: 5000 })),
        credits: {
          remaining: 200000,
          refill: { interval: "monthly", amount: 200000, refillDay: 1 },
        },
      },
    },
  },
  "identities.deleteIdentity": {
    request: { externalId: "acme_corp" },
    response: { data: {} },
  },
};
