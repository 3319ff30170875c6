import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  UpdateKeyRequest,
  UpdateKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { changeEntry } from "../../domain/credit-ledger.js";
import { applyRefill } from "../../domain/credits.js";
import { distinct } from "../../domain/distinct.js";
import { storedCidrs } from "../../domain/networks.js";
import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import { creditLedgerAppend } from "../../storage/queries/credit-ledger.js";
import { type KeyRow, keyWrite } from "../../storage/queries/keys.js";
import { ratelimitsOfKey } from "../../storage/queries/ratelimits.js";
import { authorize, beforeCreating } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { storedMeta } from "../identities/view.js";
import { type Change, mutate } from "../mutation.js";
import { lastPerName, replaceRatelimits, settingsFromRequest } from "../ratelimit-settings.js";
import { updates } from "../update-mask.js";
import { creditsHolder, writeHolder } from "./credits-holder.js";
import { checkCredits, creditState, keepsBalance } from "./credits-input.js";
import { findKey } from "./find-key.js";
import { grantCases } from "./grant-cases.js";
import { resolveRoles, setKeyPermissions, setKeyRoles } from "./grants.js";
import { identityForExternalId } from "./identity-link.js";

/**
 * Changes the settings of a key with tri-state semantics: an omitted field is
 * left alone, null clears it, a value sets it. The credits object and the lists replace
 * the whole setting. The change takes effect at once on every node (invalidation).
 * Beyond api.<apiId>.update_key, `roles` needs rbac.*.add_role_to_key and
 * rbac.*.remove_role_from_key (it replaces the key's roles), `permissions` the same for
 * permissions, creating a permission rbac.*.create_permission and an externalId no identity
 * has identity.*.create_identity: all decided before anything is written.
 */
export async function updateKey(
  deps: Deps,
  req: UpdateKeyRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof UpdateKeyResponseSchema>> {
  const set = fieldsOf(req);
  if (set.enabled && req.enabled === undefined)
    throw errors.badField("/enabled", "must not be null");
  if (set.credits) checkCredits(req.credits, "/credits");
  const { workspaceId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, req.keyId);
  const vars = { apiId: found.apiId };
  await authorizeUpdate(deps, ctx, req, set, vars);
  await mutate(deps, ctx, async (tx, change) => {
    const key = await findKey(tx, workspaceId, req.keyId, true);
    const ref = { workspaceId, keyId: key.id };
    if (set.name) key.name = req.name ?? null;
    if (set.meta) key.meta = storedMeta(req.meta);
    if (set.expires) key.expiresAt = req.expires === undefined ? null : Number(req.expires);
    if (set.enabled) key.enabled = req.enabled as boolean;
    if (set.allowedCidrs) key.allowedCidrs = storedCidrs(req.allowedCidrs);
    if (set.credits) {
      const holder = await creditsHolder(tx, key);
      const stored = holder.remaining;
      // The balance kept is the one the key has now, any refill already due applied.
      const kept = keepsBalance(req.credits, req.updateMask)
        ? applyRefill(holder, change.now).remaining
        : undefined;
      Object.assign(holder, creditState(req.credits, change.now, kept));
      await writeHolder(tx, change, key, holder);
      const refilled = kept === undefined ? stored : kept;
      await creditLedgerAppend(tx, change.now, [
        changeEntry(holder.id, stored, refilled, holder.remaining),
      ]);
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
    await writeLinks(tx, change, key, req, set, beforeCreatingFor(ctx, vars));
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
    change.emit({
      type: "key.updated",
      data: { keyId: key.id, apiId: key.apiId, changed: fields },
    });
    change.invalidate({ kind: "key", workspaceId, apiId: key.apiId, id: key.id, hash: key.hash });
  });
  return { data: {} };
}

type Fields = ReturnType<typeof fieldsOf>;

/** The fields the request changes: those of its mask, or without one those it sets. */
function fieldsOf(req: UpdateKeyRequest) {
  const mask = req.updateMask;
  return {
    name: updates(mask, "name", req.name !== undefined),
    externalId: updates(mask, "external_id", req.externalId !== undefined),
    meta: updates(mask, "meta", req.meta !== undefined),
    expires: updates(mask, "expires", req.expires !== undefined),
    credits: updates(mask, "credits", req.credits !== undefined),
    ratelimits: updates(mask, "ratelimits", req.ratelimits.length > 0),
    enabled: updates(mask, "enabled", req.enabled !== undefined),
    roles: updates(mask, "roles", req.roles.length > 0),
    permissions: updates(mask, "permissions", req.permissions.length > 0),
    allowedCidrs: updates(mask, "allowed_cidrs", req.allowedCidrs.length > 0),
  };
}

/**
 * update_key, plus what the changed fields need: `roles` and `permissions` replace the key's,
 * so each needs the add and the remove grant whatever it holds; a missing permission or
 * identity it would create needs the grant to create it.
 */
async function authorizeUpdate(
  deps: Deps,
  ctx: HandlerContext,
  req: UpdateKeyRequest,
  set: Fields,
  vars: { apiId: string },
): Promise<void> {
  const cases = await grantCases(deps.db, principalOf(ctx).workspaceId, {
    roles: set.roles ? { names: req.roles, replace: true } : undefined,
    permissions: set.permissions ? { names: distinct(req.permissions), replace: true } : undefined,
    externalIds: set.externalId && req.externalId !== undefined ? [req.externalId] : [],
  });
  authorize(ctx, vars, cases);
}

/** The refusals to run before creating a permission or an identity. */
function beforeCreatingFor(ctx: HandlerContext, vars: { apiId: string }) {
  return {
    identity: beforeCreating(ctx, vars, "createIdentity"),
    permissions: beforeCreating(ctx, vars, "createPermissions"),
  };
}

/** Writes the changed links of the key: its identity, its roles, its direct permissions. */
async function writeLinks(
  tx: Queryable,
  change: Change,
  key: KeyRow,
  req: UpdateKeyRequest,
  set: Fields,
  guard: ReturnType<typeof beforeCreatingFor>,
): Promise<void> {
  const { workspaceId } = key;
  const ref = { workspaceId, keyId: key.id };
  if (set.externalId) {
    key.identityId = await identityForExternalId(
      tx,
      change,
      workspaceId,
      req.externalId,
      guard.identity,
    );
  }
  if (set.roles) {
    await setKeyRoles(tx, change, ref, await resolveRoles(tx, workspaceId, distinct(req.roles)));
  }
  if (set.permissions) {
    await setKeyPermissions(tx, change, ref, distinct(req.permissions), guard.permissions);
  }
}
