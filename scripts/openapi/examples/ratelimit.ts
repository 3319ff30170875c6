import { type Examples, IDS } from "./example.ts";

const OVERRIDE = {
  overrideId: IDS.overrideId,
  identifier: "acme_corp",
  limit: 50,
  duration: 60000,
};

/** Examples of the ratelimit namespace. */
export const RATELIMIT_EXAMPLES: Examples = {
  "ratelimit.limit": {
    request: {
      namespace: "email.outbound",
      identifier: "acme_corp",
      limit: 10,
      duration: 60000,
      cost: 1,
    },
    response: { data: { success: true, limit: 10, remaining: 9, reset: 1795861720000 } },
  },
  "ratelimit.multiLimit": {
    request: [
      { namespace: "email.outbound", identifier: "acme_corp", limit: 10, duration: 60000 },
      { namespace: "sms.outbound", identifier: "acme_corp", limit: 100, duration: 86400000 },
    ],
    response: {
      data: {
        passed: true,
        limits: [
          {
            namespace: "email.outbound",
            identifier: "acme_corp",
            limit: 10,
            remaining: 8,
            reset: 1795861720000,
            passed: true,
          },
          {
            namespace: "sms.outbound",
            identifier: "acme_corp",
            limit: 100,
            remaining: 99,
            reset: 1795910400000,
            passed: true,
          },
        ],
      },
    },
  },
  "ratelimit.setOverride": {
    request: { namespace: "email.outbound", identifier: "acme_corp", limit: 50, duration: 60000 },
    response: { data: { overrideId: IDS.overrideId } },
  },
  "ratelimit.getOverride": {
    request: { namespace: "email.outbound", identifier: "acme_corp" },
    response: { data: OVERRIDE },
  },
  "ratelimit.listOverrides": {
    request: { namespace: "email.outbound", limit: 10 },
    response: { data: [OVERRIDE], pagination: { hasMore: false } },
  },
  "ratelimit.deleteOverride": {
    request: { namespace: "email.outbound", identifier: "acme_corp" },
    response: { data: {} },
  },
};
