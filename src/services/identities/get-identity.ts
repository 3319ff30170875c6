import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  GetIdentityRequest,
  GetIdentityResponseSchema,
} from "../../../gen/latchkey/v2/identities_pb.js";
import { ratelimitsOfIdentities } from "../../storage/queries/ratelimits.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { findIdentity } from "./find-identity.js";
import { toIdentityMessage } from "./view.js";

/** Returns an identity of the caller's workspace, named by id or externalId. */
export async function getIdentity(
  deps: Deps,
  req: GetIdentityRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetIdentityResponseSchema>> {
  const identity = await findIdentity(deps.db, principalOf(ctx).workspaceId, req);
  authorize(ctx, { identityId: identity.id });
  const limits = await ratelimitsOfIdentities(deps.db, [identity.id]);
  return { data: toIdentityMessage(identity, limits, deps.clock.now()) };
}
