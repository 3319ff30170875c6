import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  GetOverrideRequest,
  GetOverrideResponseSchema,
} from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { matchOverride } from "../../domain/overrides.js";
import { errors } from "../../errors/service-error.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { existingNamespace } from "./namespaces.js";
import { toOverrideMessage } from "./override-view.js";

/** The override that applies to an identifier: exact, else the most specific wildcard. */
export async function getOverride(
  deps: Deps,
  req: GetOverrideRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetOverrideResponseSchema>> {
  const entry = await existingNamespace(deps, principalOf(ctx).workspaceId, req.namespace);
  const override = matchOverride(entry.overrides, req.identifier);
  if (!override) throw errors.overrideNotFound();
  authorize(ctx, { namespaceId: entry.namespace.id });
  return { data: toOverrideMessage(override) };
}
