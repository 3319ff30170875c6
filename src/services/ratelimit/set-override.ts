import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  SetOverrideRequest,
  SetOverrideResponseSchema,
} from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { newId } from "../../domain/ids.js";
import { overrideUpsert } from "../../storage/queries/ratelimit-namespaces.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { existingNamespace } from "./namespaces.js";

/** Creates or replaces an identifier's override (a deleted one is revived with its id). */
export async function setOverride(
  deps: Deps,
  req: SetOverrideRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof SetOverrideResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const { namespace } = await existingNamespace(deps, workspaceId, req.namespace);
  authorize(ctx, { namespaceId: namespace.id });
  const id = await mutate(deps, ctx, async (tx, change) => {
    const row = {
      id: newId("rlor"),
      workspaceId,
      namespaceId: namespace.id,
      identifier: req.identifier,
      limit: Number(req.limit),
      durationMs: Number(req.duration),
      createdAt: change.now,
    };
    const result = await overrideUpsert(tx, row, change.now);
    change.audit({
      event: "ratelimit.set_override",
      resourceType: "ratelimitOverride",
      resourceId: result.id,
      description: `Set override ${req.identifier} of namespace ${namespace.name} to ${req.limit} per ${req.duration} ms.`,
    });
    change.invalidate({ kind: "namespace", workspaceId, id: namespace.id });
    return result.id;
  });
  return { data: { overrideId: id } };
}
