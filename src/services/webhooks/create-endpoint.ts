import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CreateEndpointRequest,
  CreateEndpointResponseSchema,
} from "../../../gen/latchkey/v2/webhooks_pb.js";
import { newId } from "../../domain/ids.js";
import { newSigningSecret } from "../../domain/webhooks/signature.js";
import { errors } from "../../errors/service-error.js";
import {
  type EndpointRow,
  endpointCountLocked,
  endpointInsert,
} from "../../storage/queries/webhook-endpoints.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import {
  checkedSubscription,
  checkedUrl,
  MAX_ENDPOINTS_PER_WORKSPACE,
  toEndpointMessage,
} from "./view.js";

/**
 * Creates an endpoint, enabled, with a new signing secret that the answer shows once (it is
 * stored sealed, see SecretBox). A workspace holding MAX_ENDPOINTS_PER_WORKSPACE endpoints
 * is refused with 412; concurrent creations count one at a time.
 */
export async function createEndpoint(
  deps: Deps,
  req: CreateEndpointRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof CreateEndpointResponseSchema>> {
  const url = checkedUrl(req.url, deps.config.webhookAllowPrivate);
  const threshold = req.creditsLowThreshold === undefined ? null : Number(req.creditsLowThreshold);
  const eventTypes = checkedSubscription(req.eventTypes, threshold);
  authorize(ctx);
  const { workspaceId } = principalOf(ctx);
  const secret = newSigningSecret();
  const row = await mutate(deps, ctx, async (tx, change) => {
    if ((await endpointCountLocked(tx, workspaceId)) >= MAX_ENDPOINTS_PER_WORKSPACE)
      throw errors.preconditionFailed(
        `A workspace has at most ${MAX_ENDPOINTS_PER_WORKSPACE} webhook endpoints; delete one first.`,
      );
    const endpoint: EndpointRow = {
      id: newId("whep"),
      workspaceId,
      url,
      description: req.description ?? null,
      eventTypes,
      creditsLowThreshold: threshold,
      enabled: true,
      disabledReason: null,
      secret: deps.config.webhookSecrets.seal(secret),
      previousSecret: null,
      previousSecretExpiresAt: null,
      failingSince: null,
      createdAt: change.now,
      updatedAt: null,
    };
    await endpointInsert(tx, endpoint);
    change.audit({
      event: "webhook.create",
      resourceType: "webhook",
      resourceId: endpoint.id,
      description: `Created webhook endpoint ${endpoint.id} for ${eventTypes.join(", ")}.`,
    });
    change.invalidate({ kind: "webhooks", workspaceId });
    return endpoint;
  });
  return { data: { endpoint: toEndpointMessage(row, row.createdAt), secret } };
}
