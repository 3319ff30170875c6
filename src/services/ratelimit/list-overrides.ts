import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ListOverridesRequest,
  ListOverridesResponseSchema,
} from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { overrideList } from "../../storage/queries/ratelimit-namespaces.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { toPage } from "../pagination.js";
import { existingNamespace } from "./namespaces.js";
import { toOverrideMessage } from "./override-view.js";

/** Page size of listOverrides when none is given (the public spec's default). */
const DEFAULT_OVERRIDES_PAGE = 10;

/** One page of a namespace's overrides by id. */
export async function listOverrides(
  deps: Deps,
  req: ListOverridesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListOverridesResponseSchema>> {
  const { namespace } = await existingNamespace(deps, principalOf(ctx).workspaceId, req.namespace);
  authorize(ctx, { namespaceId: namespace.id });
  const limit = req.limit ?? DEFAULT_OVERRIDES_PAGE;
  const rows = await overrideList(deps.db, namespace.id, { cursor: req.cursor, limit: limit + 1 });
  const { items, pagination } = toPage(rows, limit);
  return { data: items.map(toOverrideMessage), pagination };
}
