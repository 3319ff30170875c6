import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteEndpointRequest,
  DeleteEndpointResponseSchema,
} from "../../../gen/latchkey/v2/webhooks_pb.js";
import { endpointDelete } from "../../storage/queries/webhook-endpoints.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { findEndpoint } from "./find-endpoint.js";

/** Deletes an endpoint with its deliveries and their attempts; a second delete is 404. */
export async function deleteEndpoint(
  deps: Deps,
  req: DeleteEndpointRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof DeleteEndpointResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const target = await findEndpoint(deps.db, workspaceId, req.endpointId);
  authorize(ctx, { endpointId: target.id });
  await mutate(deps, ctx, async (tx, change) => {
    await findEndpoint(tx, workspaceId, target.id, true);
    await endpointDelete(tx, target.id);
    change.audit({
      event: "webhook.delete",
      resourceType: "webhook",
      resourceId: target.id,
      description: `Deleted webhook endpoint ${target.id}.`,
    });
    change.invalidate({ kind: "webhooks", workspaceId });
  });
  return { data: {} };
}
