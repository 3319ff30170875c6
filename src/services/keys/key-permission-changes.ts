import type { HandlerContext } from "@connectrpc/connect";
import type { Queryable } from "../../storage/db.js";
import type { PermissionRow } from "../../storage/queries/permissions.js";
import { authorize, beforeCreating } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { type Change, mutate } from "../mutation.js";
import { missingSlugs } from "../permissions/slugs.js";
import { toPermissionMessage } from "../permissions/view.js";
import { findKey } from "./find-key.js";
import type { KeyRef } from "./grants.js";

/** How one procedure changes a key's direct permissions, inside the change's transaction. */
export interface KeyPermissionChange {
  /** Whether slugs that name no permission yet are created (and so need the create grant). */
  readonly creates: boolean;
  /**
   * Applies the change to the locked key and returns its direct permissions afterwards.
   * `creating` throws when the caller may not create permissions; call it before creating.
   */
  apply(
    tx: Queryable,
    change: Change,
    ref: KeyRef,
    slugs: string[],
    creating: () => void,
  ): Promise<PermissionRow[]>;
}

/**
 * The steps the three direct-permission procedures share: find the key (404), authorize
 * (403; the create grant too when slugs name missing permissions that would be created),
 * then lock the key, apply the change and invalidate the key's cached record.
 */
export async function changeKeyPermissionsOf(
  deps: Deps,
  ctx: HandlerContext,
  keyId: string,
  slugs: string[],
  step: KeyPermissionChange,
) {
  const { workspaceId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, keyId);
  const missing = step.creates ? await missingSlugs(deps.db, workspaceId, slugs) : [];
  const vars = { apiId: found.apiId };
  authorize(ctx, vars, missing.length > 0 ? ["createPermissions"] : []);
  const creating = beforeCreating(ctx, vars, "createPermissions");
  const final = await mutate(deps, ctx, async (tx, change) => {
    const key = await findKey(tx, workspaceId, keyId, true);
    const ref = { workspaceId, keyId: key.id };
    const result = await step.apply(tx, change, ref, slugs, creating);
    change.emit({
      type: "key.updated",
      data: { keyId: key.id, apiId: key.apiId, changed: ["permissions"] },
    });
    change.invalidate({ kind: "key", workspaceId, apiId: key.apiId, id: key.id, hash: key.hash });
    return result;
  });
  return { data: final.map(toPermissionMessage) };
}
