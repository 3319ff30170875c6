import type { ServiceImpl } from "@connectrpc/connect";
import type { WebhooksService } from "../../../gen/latchkey/v2/webhooks_pb.js";
import type { Deps } from "../deps.js";
import { createEndpoint } from "./create-endpoint.js";
import { deleteEndpoint } from "./delete-endpoint.js";
import { listDeliveries } from "./list-deliveries.js";
import { listEndpoints } from "./list-endpoints.js";
import { redeliver } from "./redeliver.js";
import { rotateSecret } from "./rotate-secret.js";
import { updateEndpoint } from "./update-endpoint.js";

/** The WebhooksService implementation. */
export function webhooksService(deps: Deps): ServiceImpl<typeof WebhooksService> {
  return {
    createEndpoint: (req, ctx) => createEndpoint(deps, req, ctx),
    listEndpoints: (req, ctx) => listEndpoints(deps, req, ctx),
    updateEndpoint: (req, ctx) => updateEndpoint(deps, req, ctx),
    deleteEndpoint: (req, ctx) => deleteEndpoint(deps, req, ctx),
    rotateSecret: (req, ctx) => rotateSecret(deps, req, ctx),
    listDeliveries: (req, ctx) => listDeliveries(deps, req, ctx),
    redeliver: (req, ctx) => redeliver(deps, req, ctx),
  };
}
