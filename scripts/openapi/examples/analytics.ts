import { type Examples, IDS } from "./example.ts";

/** Examples of the analytics namespace. */
export const ANALYTICS_EXAMPLES: Examples = {
  "analytics.getVerifications": {
    request: {
      query:
        "SELECT outcome, count(*) AS total FROM key_verifications_v1 GROUP BY outcome ORDER BY total DESC",
    },
    response: { data: [{ outcome: "VALID", total: 1 }] },
  },
  "analytics.getCreditUsage": {
    request: { keyId: IDS.keyId, start: 1795824000000, end: 1795996800000, granularity: "day" },
    response: {
      data: [
        {
          time: 1795824000000,
          spent: 12,
          refilled: 0,
          adjusted: 100,
          verifications: { VALID: 11, USAGE_EXCEEDED: 1 },
        },
        { time: 1795910400000, spent: 0, refilled: 0, adjusted: 0, verifications: {} },
      ],
    },
  },
  "analytics.listAuditLogs": {
    request: { event: "key.create", limit: 10 },
    response: {
      data: [
        {
          id: "9",
          time: 1795861660691,
          event: "key.create",
          actor: { type: "rootkey", id: "rk_2Ty6Ui0Op4As8Df1" },
          resource: { type: "key", id: IDS.keyId },
          description: `Created key ${IDS.keyId} in API ${IDS.apiId}.`,
          requestId: "req_5Rt9Yu3Io7Pa1Sd6",
          correlationId: "req_5Rt9Yu3Io7Pa1Sd6",
        },
      ],
      pagination: { hasMore: false },
    },
  },
};
