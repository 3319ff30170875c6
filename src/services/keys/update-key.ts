import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  UpdateKeyRequest,
  UpdateKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { errors } from "../../errors/service-error.js";
import { keyWrite } from "../../storage/queries/keys.js";
import { ratelimitsOfKey } from "../../storage/queries/ratelimits.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { storedMeta } from "../identities/view.js";
import { mutate } from "../mutation.js";
import { lastPerName, replaceRatelimits, settingsFromRequest } from "../ratelimit-settings.js";
import { updates } from "../update-mask.js";
import { creditsHolder, writeHolder } from "./credits-holder.js";
import { checkCredits, creditState } from "./credits-input.js";
import { distinct, findKey } from "./find-key.js";
import { resolveRoles, setKeyPermissions, setKeyRoles } from "./grants.js";
import { identityForExternalId } from "./identity-link.js";

/**
 * Changes the settings of a key with tri-state semantics: an omitted field is
 * left alone, null clears it, a value sets it. The credits object and the lists replace
 * the whole setting. The change takes effect at once on every node (invalidation).
 */
export async function updateKey(
  deps: Deps,
  req: UpdateKeyRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof UpdateKeyResponseSchema>> {
  const mask = req.updateMask;
  const set = {
    name: updates(mask, "name", req.name !== undefined),
    externalId: updates(mask, "external_id", req.externalId !== undefined),
    meta: updates(mask, "meta", req.meta !== undefined),
    expires: updates(mask, "expires", req.expires !== undefined),
    credits: updates(mask, "credits", req.credits !== undefined),
    ratelimits: updates(mask, "ratelimits", req.ratelimits.length > 0),
    enabled: updates(mask, "enabled", req.enabled !== undefined),
    roles: updates(mask, "roles", req.roles.length > 0),
    permissions: updates(mask, "permissions", req.permissions.length > 0),
  };
  if (set.enabled && req.enabled === undefined)
    throw errors.badField("/enabled", "must not be null");
  if (set.credits) checkCredits(req.credits, "/credits");
  const { workspaceId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, req.keyId);
  authorize(ctx, { apiId: found.apiId });
  await mutate(deps, ctx, async (tx, change) => {
    const key = await findKey(tx, workspaceId, req.keyId, true);
    const ref = { workspaceId, keyId: key.id };
    if (set.name) key.name = req.name ?? null;
    if (set.meta) key.meta = storedMeta(req.meta);
    if (set.expires) key.expiresAt = req.expires === undefined ? null : Number(req.expires);
    if (set.enabled) key.enabled = req.enabled as boolean;
    if (set.externalId) {
      key.identityId =
        req.externalId === undefined
          ? null
          : await identityForExternalId(tx, change, workspaceId, req.externalId);
    }
    if (set.credits) {
      const holder = await creditsHolder(tx, key);
      Object.assign(holder, creditState(req.credits, change.now));
      await writeHolder(tx, change, key, holder);
    }
    if (set.ratelimits) {
      const stored = await ratelimitsOfKey(tx, key.id);
      await replaceRatelimits(
        tx,
        change,
        ref,
        stored,
        lastPerName(settingsFromRequest(req.ratelimits)),
      );
    }
    if (set.roles)
      await setKeyRoles(tx, change, ref, await resolveRoles(tx, workspaceId, distinct(req.roles)));
    if (set.permissions) await setKeyPermissions(tx, change, ref, distinct(req.permissions));
    key.updatedAt = change.now;
    await keyWrite(tx, key);
    const fields = Object.entries(set)
      .filter(([, v]) => v)
      .map(([k]) => k);
    change.audit({
      event: "key.update",
      resourceType: "key",
      resourceId: key.id,
      description: `Updated ${fields.join(", ") || "nothing"} of key ${key.id}.`,
    });
    change.invalidate({ kind: "key", workspaceId, apiId: key.apiId, id: key.id, hash: key.hash });
  });
  return { data: {} };
}
