import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  UpdateIdentityRequest,
  UpdateIdentityResponseSchema,
} from "../../../gen/latchkey/v2/identities_pb.js";
import { changeEntry } from "../../domain/credit-ledger.js";
import { applyRefill } from "../../domain/credits.js";
import { creditLedgerAppend } from "../../storage/queries/credit-ledger.js";
import {
  identitySetCredits,
  identitySetMeta,
  identityTouch,
} from "../../storage/queries/identities.js";
import { ratelimitsOfIdentities } from "../../storage/queries/ratelimits.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { checkCredits, creditState, keepsBalance } from "../keys/credits-input.js";
import { mutate } from "../mutation.js";
import { replaceRatelimits, settingsFromRequest } from "../ratelimit-settings.js";
import { updates } from "../update-mask.js";
import { findIdentity } from "./find-identity.js";
import { storedMeta, toIdentityMessage } from "./view.js";

/**
 * Changes the metadata, rate limits and/or credit pool of an identity: an omitted field is
 * left alone, null clears it, a value replaces it. Answers the identity after the change.
 * Every change invalidates the cached records of the identity's keys on every node: they
 * carry the identity's limits and credit pool, and a record still showing an unlimited pool
 * would let its key verify without spending from it.
 */
export async function updateIdentity(
  deps: Deps,
  req: UpdateIdentityRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof UpdateIdentityResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const target = await findIdentity(deps.db, workspaceId, req);
  authorize(ctx, { identityId: target.id });
  const setMeta = updates(req.updateMask, "meta", req.meta !== undefined);
  const setLimits = updates(req.updateMask, "ratelimits", req.ratelimits.length > 0);
  const setCredits = updates(req.updateMask, "credits", req.credits !== undefined);
  if (setCredits) checkCredits(req.credits, "/credits");
  const result = await mutate(deps, ctx, async (tx, change) => {
    // Read and locked inside the transaction: concurrent updates of this identity take turns
    // (the second sees the rate limits the first added, and updates them rather than adding
    // a second limit of one name), and a concurrent delete turns into a 404 here.
    const identity = await findIdentity(tx, workspaceId, { identity: target.id }, true);
    let limits = await ratelimitsOfIdentities(tx, [identity.id]);
    if (setMeta) {
      identity.meta = storedMeta(req.meta);
      await identitySetMeta(tx, identity.id, identity.meta, change.now);
    }
    if (setLimits) {
      const owner = { workspaceId, identityId: identity.id };
      limits = await replaceRatelimits(
        tx,
        change,
        owner,
        limits,
        settingsFromRequest(req.ratelimits),
      );
      await identityTouch(tx, identity.id, change.now);
    }
    if (setCredits) {
      // The balance kept is the one the pool has now, any refill already due applied.
      const stored = identity.remaining;
      const kept = keepsBalance(req.credits, req.updateMask)
        ? applyRefill(identity, change.now).remaining
        : undefined;
      Object.assign(identity, creditState(req.credits, change.now, kept));
      await identitySetCredits(tx, identity.id, identity, change.now);
      const refilled = kept === undefined ? stored : kept;
      await creditLedgerAppend(tx, change.now, [
        changeEntry(identity.id, stored, refilled, identity.remaining),
      ]);
    }
    if (setMeta || setLimits || setCredits) {
      const fields = [setMeta && "meta", setLimits && "ratelimits", setCredits && "credits"];
      change.emit({
        type: "identity.updated",
        data: {
          identityId: identity.id,
          externalId: identity.externalId,
          changed: fields.filter((f): f is string => typeof f === "string"),
        },
      });
      change.audit({
        event: "identity.update",
        resourceType: "identity",
        resourceId: identity.id,
        description: `Updated ${fields.filter(Boolean).join(" and ")} of identity ${identity.id}.`,
      });
      change.invalidate({ kind: "identity", workspaceId, id: identity.id });
    }
    return toIdentityMessage(identity, limits, change.now);
  });
  return { data: result };
}
