import type { RatelimitSetting } from "../../domain/ratelimit-config.js";
import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import { type KeyRow, keyInsert } from "../../storage/queries/keys.js";
import type { PermissionRow } from "../../storage/queries/permissions.js";
import type { RoleRow } from "../../storage/queries/roles.js";
import type { Change } from "../mutation.js";
import { ensurePermissions } from "../permissions/slugs.js";
import { replaceRatelimits } from "../ratelimit-settings.js";
import { grantToNewKey } from "./grants.js";

/** A key to store with everything attached to it. */
export interface NewKey {
  row: KeyRow;
  ratelimits: readonly RatelimitSetting[];
  /** Slugs of its direct permissions (missing ones are created), or the permissions themselves. */
  permissions: readonly string[] | { rows: readonly PermissionRow[] };
  roles: readonly RoleRow[];
  /** Runs before a missing permission is created, and may throw to refuse it. */
  beforeCreatingPermissions?: () => void;
}

/**
 * Stores a key with its rate limits, permissions (missing ones are created) and roles,
 * and declares its audit record and invalidation. Returns false when the hash exists
 * already (nothing is written for this key then).
 */
export async function insertKey(
  tx: Queryable,
  change: Change,
  k: NewKey,
  description: string,
): Promise<boolean> {
  if (!(await keyInsert(tx, k.row))) return false;
  const ref = { workspaceId: k.row.workspaceId, keyId: k.row.id };
  change.audit({ event: "key.create", resourceType: "key", resourceId: k.row.id, description });
  change.emit(
    {
      type: "key.created",
      data: {
        keyId: k.row.id,
        apiId: k.row.apiId,
        start: k.row.start,
        ...(k.row.name !== null ? { name: k.row.name } : {}),
        ...(k.row.identityId !== null ? { identityId: k.row.identityId } : {}),
        ...(k.row.expiresAt !== null ? { expires: k.row.expiresAt } : {}),
        enabled: k.row.enabled,
      },
    },
    k.row.workspaceId,
  );
  await replaceRatelimits(tx, change, ref, [], k.ratelimits);
  const permissions =
    "rows" in k.permissions
      ? k.permissions.rows
      : await ensurePermissions(
          tx,
          change,
          ref.workspaceId,
          k.permissions,
          k.beforeCreatingPermissions,
        );
  await grantToNewKey(tx, change, ref, permissions, k.roles);
  change.invalidate({
    kind: "key",
    workspaceId: k.row.workspaceId,
    apiId: k.row.apiId,
    id: k.row.id,
    hash: k.row.hash,
  });
  return true;
}

/** Like insertKey for a freshly generated secret, whose hash cannot exist (2^-128 odds). */
export async function insertNewKey(
  tx: Queryable,
  change: Change,
  k: NewKey,
  description: string,
): Promise<void> {
  if (!(await insertKey(tx, change, k, description))) {
    throw errors.unexpected(new Error("a generated key collided with an existing hash"));
  }
}
