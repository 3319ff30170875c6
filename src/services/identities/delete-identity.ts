import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteIdentityRequest,
  DeleteIdentityResponseSchema,
} from "../../../gen/latchkey/v2/identities_pb.js";
import { errors } from "../../errors/service-error.js";
import { identitySoftDelete } from "../../storage/queries/identities.js";
import { ratelimitsOfIdentities } from "../../storage/queries/ratelimits.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { replaceRatelimits } from "../ratelimit-settings.js";
import { findIdentity } from "./find-identity.js";

/**
 * Soft-deletes an identity and removes its rate limits. Its keys stay, and behave as
 * identity-less; the externalId stays reserved (a re-creation is 409). A second delete is 404.
 */
export async function deleteIdentity(
  deps: Deps,
  req: DeleteIdentityRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof DeleteIdentityResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const identity = await findIdentity(deps.db, workspaceId, req);
  authorize(ctx, { identityId: identity.id });
  await mutate(deps, ctx, async (tx, change) => {
    if (!(await identitySoftDelete(tx, identity.id, change.now))) throw errors.identityNotFound();
    const limits = await ratelimitsOfIdentities(tx, [identity.id]);
    await replaceRatelimits(tx, change, { workspaceId, identityId: identity.id }, limits, []);
    change.audit({
      event: "identity.delete",
      resourceType: "identity",
      resourceId: identity.id,
      description: `Deleted identity ${identity.id} (${identity.externalId}).`,
    });
    change.emit({
      type: "identity.deleted",
      data: { identityId: identity.id, externalId: identity.externalId },
    });
    change.invalidate({ kind: "identity", workspaceId, id: identity.id });
  });
  return { data: {} };
}
