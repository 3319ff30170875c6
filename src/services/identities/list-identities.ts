import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ListIdentitiesRequest,
  ListIdentitiesResponseSchema,
} from "../../../gen/latchkey/v2/identities_pb.js";
import { identityList } from "../../storage/queries/identities.js";
import { ratelimitsOfIdentities } from "../../storage/queries/ratelimits.js";
import { authorizeRows } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { pageSize, searchTerm, toPage } from "../pagination.js";
import { toIdentityMessage } from "./view.js";

/**
 * One page of the live identities of the workspace that the root key may read, by id, with
 * their rate limits. A key with per-identity grants lists only those identities.
 */
export async function listIdentities(
  deps: Deps,
  req: ListIdentitiesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListIdentitiesResponseSchema>> {
  const readable = authorizeRows(ctx, "identityId");
  const limit = pageSize(req.limit);
  const rows = await identityList(deps.db, principalOf(ctx).workspaceId, {
    cursor: req.cursor,
    limit: limit + 1,
    search: searchTerm(req.search),
    ids: readable === "all" ? null : readable,
  });
  const { items, pagination } = toPage(rows, limit);
  const limits = await ratelimitsOfIdentities(
    deps.db,
    items.map((i) => i.id),
  );
  const now = deps.clock.now();
  return {
    data: items.map((i) =>
      toIdentityMessage(
        i,
        limits.filter((l) => l.identityId === i.id),
        now,
      ),
    ),
    pagination,
  };
}
