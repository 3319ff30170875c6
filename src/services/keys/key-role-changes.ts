import type { HandlerContext } from "@connectrpc/connect";
import type { Queryable } from "../../storage/db.js";
import type { RoleRow } from "../../storage/queries/roles.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { type Change, mutate } from "../mutation.js";
import { permissionsByRole } from "../permissions/find-role.js";
import { toRoleMessage } from "../permissions/view.js";
import { findKey } from "./find-key.js";
import { type KeyRef, resolveRoles } from "./grants.js";

/**
 * How one procedure changes a key's roles, inside the change's transaction: applies the
 * change to the locked key and returns its roles afterwards.
 */
export type KeyRoleChange = (
  tx: Queryable,
  change: Change,
  ref: KeyRef,
  roles: RoleRow[],
) => Promise<RoleRow[]>;

/**
 * The steps the three role procedures share: find the key (404), authorize (403), then lock
 * the key, resolve the role names (404 role_not_found, nothing changes), apply the change,
 * invalidate the key's cached record and answer its roles with their permissions.
 */
export async function changeKeyRolesOf(
  deps: Deps,
  ctx: HandlerContext,
  keyId: string,
  names: string[],
  apply: KeyRoleChange,
) {
  const { workspaceId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, keyId);
  authorize(ctx, { apiId: found.apiId });
  const final = await mutate(deps, ctx, async (tx, change) => {
    const key = await findKey(tx, workspaceId, keyId, true);
    const roles = await resolveRoles(tx, workspaceId, names);
    const ref = { workspaceId, keyId: key.id };
    const result = await apply(tx, change, ref, roles);
    change.emit({
      type: "key.updated",
      data: { keyId: key.id, apiId: key.apiId, changed: ["roles"] },
    });
    change.invalidate({ kind: "key", workspaceId, apiId: key.apiId, id: key.id, hash: key.hash });
    const permissions = await permissionsByRole(
      tx,
      result.map((r) => r.id),
    );
    return result.map((r) => toRoleMessage(r, permissions.get(r.id) ?? []));
  });
  return { data: final };
}
