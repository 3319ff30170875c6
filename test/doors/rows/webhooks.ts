import type { Given } from "../given.js";
import { invalid, ok, type Row, refused } from "../row.js";

const URL = "https://hooks.example.com/latchkey";
const NOT_FOUND = "err:svc:data:webhook_endpoint_not_found";
const FORBIDDEN = "err:svc:authorization:insufficient_permissions";

/** An endpoint of the setup's workspace (registered as a placeholder). */
async function endpoint(g: Given, eventTypes = ["key.created"]): Promise<string> {
  const made = await g.call("webhooks.createEndpoint", { url: URL, eventTypes });
  g.know("whep", made.endpoint.id);
  return made.endpoint.id;
}

export const WEBHOOK_ROWS: Row[] = [
  ok("webhooks.createEndpoint", "an endpoint for key events", async () => ({
    body: { url: URL, eventTypes: ["key.created", "key.expired"], description: "doors" },
  })),
  invalid(
    "webhooks.createEndpoint",
    "an event type not in the list",
    ["/eventTypes/0"],
    async () => ({
      body: { url: URL, eventTypes: ["key.frobbed"] },
    }),
  ),
  // One endpoint: ids are random, so a page of several would differ in order between doors.
  ok("webhooks.listEndpoints", "the workspace's endpoint", async (g) => {
    await endpoint(g, ["identity.created"]);
    return { body: {} };
  }),
  refused(
    "webhooks.listEndpoints",
    "a key that may not read webhooks",
    403,
    FORBIDDEN,
    async (g) => ({
      body: {},
      auth: await g.rootKeyWith(["webhook.*.create_webhook"]),
    }),
  ),
  ok("webhooks.updateEndpoint", "new event types and a description", async (g) => ({
    body: { endpointId: await endpoint(g), eventTypes: ["key.deleted"], description: "moved" },
  })),
  refused("webhooks.updateEndpoint", "an unknown endpoint", 404, NOT_FOUND, async () => ({
    body: { endpointId: "whep_0000000000000000", enabled: false },
  })),
  ok("webhooks.deleteEndpoint", "an endpoint", async (g) => ({
    body: { endpointId: await endpoint(g) },
  })),
  refused(
    "webhooks.deleteEndpoint",
    "a key that may only update it",
    403,
    FORBIDDEN,
    async (g) => ({
      body: { endpointId: await endpoint(g) },
      auth: await g.rootKeyWith(["webhook.*.update_webhook"]),
    }),
  ),
  ok("webhooks.rotateSecret", "with the default grace", async (g) => ({
    body: { endpointId: await endpoint(g) },
  })),
  invalid(
    "webhooks.rotateSecret",
    "a grace beyond 7 days",
    ["/previousSecretExpiresInMs"],
    async (g) => ({
      body: { endpointId: await endpoint(g), previousSecretExpiresInMs: 604_800_001 },
    }),
  ),
  ok("webhooks.listDeliveries", "an endpoint that has none yet", async (g) => ({
    body: { endpointId: await endpoint(g, ["key.deleted"]) },
  })),
  refused("webhooks.listDeliveries", "an unknown endpoint", 404, NOT_FOUND, async () => ({
    body: { endpointId: "whep_0000000000000000" },
  })),
  ok("webhooks.redeliver", "the delivery of a key's creation", async (g) => {
    const endpointId = await endpoint(g);
    await g.key(await g.api());
    const list = await g.call("webhooks.listDeliveries", { endpointId });
    return { body: { endpointId, deliveryId: list[0].id } };
  }),
  refused(
    "webhooks.redeliver",
    "a delivery the endpoint does not have",
    404,
    "err:svc:data:webhook_delivery_not_found",
    async (g) => ({ body: { endpointId: await endpoint(g), deliveryId: "msg_none" } }),
  ),
];
