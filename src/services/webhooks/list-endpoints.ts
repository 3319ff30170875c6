import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ListEndpointsRequest,
  ListEndpointsResponseSchema,
} from "../../../gen/latchkey/v2/webhooks_pb.js";
import { endpointList } from "../../storage/queries/webhook-endpoints.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { pageSize, toPage } from "../pagination.js";
import { toEndpointMessage } from "./view.js";

/** One page of the workspace's endpoints by id, without their secrets. */
export async function listEndpoints(
  deps: Deps,
  req: ListEndpointsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListEndpointsResponseSchema>> {
  authorize(ctx);
  const limit = pageSize(req.limit);
  const rows = await endpointList(deps.db, principalOf(ctx).workspaceId, req.cursor, limit + 1);
  const { items, pagination } = toPage(rows, limit);
  const now = deps.clock.now();
  return { data: items.map((r) => toEndpointMessage(r, now)), pagination };
}
