import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CreateIdentityRequest,
  CreateIdentityResponseSchema,
} from "../../../gen/latchkey/v2/identities_pb.js";
import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import { identityInsert } from "../../storage/queries/identities.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { checkCredits, creditState } from "../keys/credits-input.js";
import { mutate } from "../mutation.js";
import { replaceRatelimits, settingsFromRequest } from "../ratelimit-settings.js";
import { storedMeta } from "./view.js";

/**
 * Creates an identity with its metadata, rate limits and credit pool. The externalId is unique in the
 * workspace including deleted identities, so a re-creation or a retried call is 409; of
 * concurrent creations with one externalId exactly one succeeds (a unique index decides).
 */
export async function createIdentity(
  deps: Deps,
  req: CreateIdentityRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof CreateIdentityResponseSchema>> {
  checkCredits(req.credits, "/credits");
  authorize(ctx);
  const { workspaceId } = principalOf(ctx);
  const id = newId("id");
  await mutate(
    deps,
    ctx,
    async (tx, change) => {
      await identityInsert(tx, {
        id,
        workspaceId,
        externalId: req.externalId,
        meta: storedMeta(req.meta),
        createdAt: change.now,
        updatedAt: null,
        deletedAt: null,
        ...creditState(req.credits, change.now),
      });
      change.audit({
        event: "identity.create",
        resourceType: "identity",
        resourceId: id,
        description: `Created identity ${id} (${req.externalId}).`,
      });
      change.emit({
        type: "identity.created",
        data: { identityId: id, externalId: req.externalId },
      });
      await replaceRatelimits(
        tx,
        change,
        { workspaceId, identityId: id },
        [],
        settingsFromRequest(req.ratelimits),
      );
      change.invalidate({ kind: "identity", workspaceId, id });
    },
    {
      identities_external_id: () => errors.identityAlreadyExists(req.externalId),
    },
  );
  return { data: { identityId: id } };
}
