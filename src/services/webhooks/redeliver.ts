import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  RedeliverRequest,
  RedeliverResponseSchema,
} from "../../../gen/latchkey/v2/webhooks_pb.js";
import { errors } from "../../errors/service-error.js";
import { deliveryRedeliver } from "../../storage/queries/webhook-deliveries.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { findEndpoint } from "./find-endpoint.js";

/**
 * Makes a delivery pending again, due now, with a fresh backoff and retry window and its
 * `webhook-id` unchanged; this node's dispatcher is woken. 412 while the endpoint is disabled
 * (nothing would be sent).
 */
export async function redeliver(
  deps: Deps,
  req: RedeliverRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof RedeliverResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const target = await findEndpoint(deps.db, workspaceId, req.endpointId);
  authorize(ctx, { endpointId: target.id });
  await mutate(deps, ctx, async (tx, change) => {
    const e = await findEndpoint(tx, workspaceId, target.id, true);
    if (!e.enabled)
      throw errors.preconditionFailed(
        "This webhook endpoint is disabled; enable it with webhooks.updateEndpoint first.",
      );
    if (!(await deliveryRedeliver(tx, e.id, req.deliveryId, change.now)))
      throw errors.webhookDeliveryNotFound();
    change.audit({
      event: "webhook.redeliver",
      resourceType: "webhook",
      resourceId: e.id,
      description: `Redelivered ${req.deliveryId} to webhook endpoint ${e.id}.`,
    });
  });
  deps.webhooks?.wake();
  return { data: {} };
}
