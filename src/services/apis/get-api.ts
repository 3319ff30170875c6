import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { GetApiRequest, GetApiResponseSchema } from "../../../gen/latchkey/v2/apis_pb.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { findApi } from "./find-api.js";
import { toApiMessage } from "./view.js";

/**
 * Returns an API of the caller's workspace. 404 comes before 403: another workspace's API is
 * indistinguishable from a missing one, and only an API that exists has its permission checked.
 */
export async function getApi(
  deps: Deps,
  req: GetApiRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetApiResponseSchema>> {
  const api = await findApi(deps, principalOf(ctx).workspaceId, req.apiId);
  authorize(ctx, { apiId: api.id });
  return { data: toApiMessage(api) };
}
