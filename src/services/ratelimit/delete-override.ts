import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteOverrideRequest,
  DeleteOverrideResponseSchema,
} from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { errors } from "../../errors/service-error.js";
import { overrideDelete } from "../../storage/queries/ratelimit-namespaces.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { existingNamespace } from "./namespaces.js";

/** Deletes the override with exactly this identifier (patterns are matched literally). */
export async function deleteOverride(
  deps: Deps,
  req: DeleteOverrideRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof DeleteOverrideResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const { namespace } = await existingNamespace(deps, workspaceId, req.namespace);
  authorize(ctx, { namespaceId: namespace.id });
  await mutate(deps, ctx, async (tx, change) => {
    const id = await overrideDelete(tx, namespace.id, req.identifier, change.now);
    if (!id) throw errors.overrideNotFound();
    change.audit({
      event: "ratelimit.delete_override",
      resourceType: "ratelimitOverride",
      resourceId: id,
      description: `Deleted override ${req.identifier} of namespace ${namespace.name}.`,
    });
    change.invalidate({ kind: "namespace", workspaceId, id: namespace.id });
  });
  return { data: {} };
}
