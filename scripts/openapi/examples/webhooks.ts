import { type Examples, IDS } from "./example.ts";

const CREATED_AT = 1767225600000;

/** An endpoint as reads answer it. */
const ENDPOINT = {
  id: IDS.endpointId,
  url: "https://hooks.example.com/latchkey",
  eventTypes: ["key.created", "key.expired", "credits.low"],
  description: "Billing alerts",
  enabled: true,
  creditsLowThreshold: 100,
  createdAt: CREATED_AT,
};

/** Examples of the webhooks namespace. */
export const WEBHOOK_EXAMPLES: Examples = {
  "webhooks.createEndpoint": {
    request: {
      url: ENDPOINT.url,
      eventTypes: ENDPOINT.eventTypes,
      description: ENDPOINT.description,
      creditsLowThreshold: 100,
    },
    response: { data: { endpoint: ENDPOINT, secret: IDS.webhookSecret } },
  },
  "webhooks.listEndpoints": {
    request: { limit: 10 },
    response: { data: [ENDPOINT], pagination: { hasMore: false } },
  },
  "webhooks.updateEndpoint": {
    request: { endpointId: IDS.endpointId, eventTypes: ["key.expired", "key.leaked"] },
    response: {
      data: {
        ...ENDPOINT,
        eventTypes: ["key.expired", "key.leaked"],
        updatedAt: CREATED_AT + 60000,
      },
    },
  },
  "webhooks.rotateSecret": {
    request: { endpointId: IDS.endpointId, previousSecretExpiresInMs: 86400000 },
    response: {
      data: {
        secret: "whsec_Vd3Pq8Lm2Xc6Vb0Zt3Nq8Lm2Xc6Vb0Zt",
        previousSecretExpiresAt: CREATED_AT + 86460000,
      },
    },
  },
  "webhooks.listDeliveries": {
    request: { endpointId: IDS.endpointId, limit: 20 },
    response: {
      data: [
        {
          id: IDS.deliveryId,
          eventType: "key.created",
          status: "pending",
          createdAt: CREATED_AT + 120000,
          nextAttemptAt: CREATED_AT + 130250,
          attempts: [
            {
              at: CREATED_AT + 120250,
              status: "failed",
              responseStatus: 503,
              latencyMs: 84,
              error: "answered 503",
              nextRetryAt: CREATED_AT + 125250,
            },
            {
              at: CREATED_AT + 125250,
              status: "error",
              latencyMs: 10000,
              error: "timed out after 10000 ms",
              nextRetryAt: CREATED_AT + 135250,
            },
          ],
        },
      ],
      pagination: { hasMore: false },
    },
  },
  "webhooks.redeliver": {
    request: { endpointId: IDS.endpointId, deliveryId: IDS.deliveryId },
    response: { data: {} },
  },
  "webhooks.deleteEndpoint": {
    request: { endpointId: IDS.endpointId },
    response: { data: {} },
  },
};
