import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  UpdateEndpointRequest,
  UpdateEndpointResponseSchema,
} from "../../../gen/latchkey/v2/webhooks_pb.js";
import { errors } from "../../errors/service-error.js";
import { deliveriesGiveUp, endpointUpdate } from "../../storage/queries/webhook-endpoints.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { updates } from "../update-mask.js";
import { findEndpoint } from "./find-endpoint.js";
import { checkedSubscription, checkedUrl, toEndpointMessage } from "./view.js";

/**
 * Changes what the request names: an omitted field is left alone (null clears the
 * description and the threshold). Enabling an endpoint clears what Latchkey recorded of its
 * failures, so it is not disabled again at once; disabling it gives up its pending deliveries. Answers the endpoint after the change.
 */
export async function updateEndpoint(
  deps: Deps,
  req: UpdateEndpointRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof UpdateEndpointResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const target = await findEndpoint(deps.db, workspaceId, req.endpointId);
  authorize(ctx, { endpointId: target.id });
  const m = req.updateMask;
  const setUrl = updates(m, "url", req.url !== undefined);
  const setTypes = updates(m, "event_types", req.eventTypes.length > 0);
  const setDescription = updates(m, "description", req.description !== undefined);
  const setEnabled = updates(m, "enabled", req.enabled !== undefined);
  const setThreshold = updates(m, "credits_low_threshold", req.creditsLowThreshold !== undefined);
  if (setUrl && req.url === undefined) throw errors.badField("/url", "must not be null");
  if (setTypes && req.eventTypes.length === 0)
    throw errors.badField("/eventTypes", "must name at least one event type");
  const url = setUrl ? checkedUrl(req.url as string, deps.config.webhookAllowPrivate) : undefined;
  const row = await mutate(deps, ctx, async (tx, change) => {
    const e = await findEndpoint(tx, workspaceId, target.id, true);
    if (url !== undefined) e.url = url;
    if (setDescription) e.description = req.description ?? null;
    if (setThreshold)
      e.creditsLowThreshold =
        req.creditsLowThreshold === undefined ? null : Number(req.creditsLowThreshold);
    e.eventTypes = checkedSubscription(
      setTypes ? req.eventTypes : e.eventTypes,
      e.creditsLowThreshold,
    );
    if (setEnabled) {
      if (req.enabled && !e.enabled) {
        e.disabledReason = null;
        e.failingSince = null;
      }
      // A disabled endpoint's pending deliveries are given up (redeliver sends one again).
      if (!req.enabled && e.enabled) await deliveriesGiveUp(tx, e.id);
      e.enabled = req.enabled === true;
    }
    e.updatedAt = change.now;
    await endpointUpdate(tx, e);
    const fields = [
      setUrl && "url",
      setTypes && "eventTypes",
      setDescription && "description",
      setEnabled && "enabled",
      setThreshold && "creditsLowThreshold",
    ].filter(Boolean);
    change.audit({
      event: "webhook.update",
      resourceType: "webhook",
      resourceId: e.id,
      description: `Updated ${fields.join(", ") || "nothing"} of webhook endpoint ${e.id}.`,
    });
    change.invalidate({ kind: "webhooks", workspaceId });
    return e;
  });
  return { data: toEndpointMessage(row, row.updatedAt ?? row.createdAt) };
}
