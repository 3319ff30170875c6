import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteApiRequest,
  DeleteApiResponseSchema,
} from "../../../gen/latchkey/v2/apis_pb.js";
import { errors } from "../../errors/service-error.js";
import { apiSoftDelete } from "../../storage/queries/apis.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { findApi } from "./find-api.js";

/**
 * Soft-deletes an API. Its keys stay in storage but stop verifying. A second delete is
 * 404; of two concurrent deletes exactly one succeeds.
 */
export async function deleteApi(
  deps: Deps,
  req: DeleteApiRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof DeleteApiResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const api = await findApi(deps, workspaceId, req.apiId);
  authorize(ctx, { apiId: api.id });
  await mutate(deps, ctx, async (tx, change) => {
    if (!(await apiSoftDelete(tx, workspaceId, api.id, change.now))) throw errors.apiNotFound();
    change.audit({
      event: "api.delete",
      resourceType: "api",
      resourceId: api.id,
      description: `Deleted API ${api.id}.`,
    });
    change.invalidate({ kind: "api", workspaceId, id: api.id });
  });
  return { data: {} };
}
