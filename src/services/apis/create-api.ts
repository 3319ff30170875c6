import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CreateApiRequest,
  CreateApiResponseSchema,
} from "../../../gen/latchkey/v2/apis_pb.js";
import { newId } from "../../domain/ids.js";
import { storedCidrs } from "../../domain/networks.js";
import { apiInsert } from "../../storage/queries/apis.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { keyFormatOf, leakPolicyOf } from "./api-view.js";

/**
 * Creates an API in the caller's workspace, with the format of its keys (checksummed unless
 * asked otherwise), its leak policy (disable unless asked otherwise) and the network ranges
 * its keys verify from by default (none when the list is empty).
 */
export async function createApi(
  deps: Deps,
  req: CreateApiRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof CreateApiResponseSchema>> {
  authorize(ctx);
  const { workspaceId } = principalOf(ctx);
  const id = newId("api");
  await mutate(deps, ctx, async (tx, change) => {
    await apiInsert(tx, {
      id,
      workspaceId,
      name: req.name,
      keyFormat: keyFormatOf(req.keyFormat),
      leakPolicy: leakPolicyOf(req.leakPolicy),
      createdAt: change.now,
      allowedCidrs: storedCidrs(req.allowedCidrs),
    });
    change.audit({
      event: "api.create",
      resourceType: "api",
      resourceId: id,
      description: `Created API ${id}.`,
    });
    // A lookup of this id may have been cached as missing.
    change.invalidate({ kind: "api", workspaceId, id });
  });
  return { data: { apiId: id } };
}
