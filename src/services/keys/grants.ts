import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import {
  keyDirectPermissions,
  keyGrantPermissions,
  keyGrantRoles,
  keyRevokePermissions,
  keyRevokeRoles,
  keyRoles,
  rolesByNames,
} from "../../storage/queries/key-links.js";
import type { PermissionRow } from "../../storage/queries/permissions.js";
import type { RoleRow } from "../../storage/queries/roles.js";
import type { Change } from "../mutation.js";
import { ensurePermissions } from "../permissions/slugs.js";

/** The roles of the workspace with these names; 404 role_not_found naming the first missing one. */
export async function resolveRoles(
  q: Queryable,
  workspaceId: string,
  names: readonly string[],
): Promise<RoleRow[]> {
  const found = await rolesByNames(q, workspaceId, names);
  const byName = new Set(found.map((r) => r.name));
  const missing = names.find((n) => !byName.has(n));
  if (missing !== undefined) throw errors.roleNotFound(missing);
  return found;
}

/** The key whose grants change, in its workspace. */
export interface KeyRef {
  workspaceId: string;
  keyId: string;
}

function auditLinks(
  change: Change,
  key: KeyRef,
  event: string,
  verb: string,
  kind: string,
  names: string[],
) {
  for (const name of names) {
    change.audit({
      event,
      resourceType: "key",
      resourceId: key.keyId,
      description: `${verb} ${kind} ${name} ${verb === "Connected" ? "to" : "from"} key ${key.keyId}.`,
    });
  }
}

/**
 * Changes the direct permissions of a key to `add` more and `remove` some (by id), with
 * their audit records. Returns the direct permissions after the change, by slug.
 */
export async function changeKeyPermissions(
  tx: Queryable,
  change: Change,
  key: KeyRef,
  add: readonly PermissionRow[],
  remove: readonly PermissionRow[],
): Promise<PermissionRow[]> {
  const current = await keyDirectPermissions(tx, key.keyId);
  const had = new Set(current.map((p) => p.id));
  const added = add.filter((p) => !had.has(p.id));
  const removed = remove.filter((p) => had.has(p.id));
  await keyGrantPermissions(
    tx,
    key.workspaceId,
    key.keyId,
    added.map((p) => p.id),
    change.now,
  );
  await keyRevokePermissions(
    tx,
    key.keyId,
    removed.map((p) => p.id),
  );
  auditLinks(
    change,
    key,
    "authorization.connect_permission_and_key",
    "Connected",
    "permission",
    added.map((p) => p.slug),
  );
  auditLinks(
    change,
    key,
    "authorization.disconnect_permission_and_key",
    "Disconnected",
    "permission",
    removed.map((p) => p.slug),
  );
  if (added.length === 0 && removed.length === 0) return current;
  return keyDirectPermissions(tx, key.keyId);
}

/**
 * Replaces the direct permissions of a key by these slugs (missing permissions are created,
 * after `mayCreate` allowed it: see ensurePermissions).
 */
export async function setKeyPermissions(
  tx: Queryable,
  change: Change,
  key: KeyRef,
  slugs: readonly string[],
  mayCreate?: () => void,
): Promise<PermissionRow[]> {
  const desired = await ensurePermissions(tx, change, key.workspaceId, slugs, mayCreate);
  const wanted = new Set(desired.map((p) => p.id));
  const current = await keyDirectPermissions(tx, key.keyId);
  return changeKeyPermissions(
    tx,
    change,
    key,
    desired,
    current.filter((p) => !wanted.has(p.id)),
  );
}

/**
 * Grants permissions and roles to a key created in this transaction, which has none yet, with
 * their audit records: no reads of what the key had, a slice of grants per statement.
 */
export async function grantToNewKey(
  tx: Queryable,
  change: Change,
  key: KeyRef,
  permissions: readonly PermissionRow[],
  roles: readonly RoleRow[],
): Promise<void> {
  await keyGrantPermissions(
    tx,
    key.workspaceId,
    key.keyId,
    permissions.map((p) => p.id),
    change.now,
  );
  await keyGrantRoles(
    tx,
    key.workspaceId,
    key.keyId,
    roles.map((r) => r.id),
    change.now,
  );
  auditLinks(
    change,
    key,
    "authorization.connect_permission_and_key",
    "Connected",
    "permission",
    permissions.map((p) => p.slug),
  );
  auditLinks(
    change,
    key,
    "authorization.connect_role_and_key",
    "Connected",
    "role",
    roles.map((r) => r.name),
  );
}

/** Changes the roles of a key to `add` more and `remove` some, with audit records; returns the roles after. */
export async function changeKeyRoles(
  tx: Queryable,
  change: Change,
  key: KeyRef,
  add: readonly RoleRow[],
  remove: readonly RoleRow[],
): Promise<RoleRow[]> {
  const current = await keyRoles(tx, key.keyId);
  const had = new Set(current.map((r) => r.id));
  const added = add.filter((r) => !had.has(r.id));
  const removed = remove.filter((r) => had.has(r.id));
  await keyGrantRoles(
    tx,
    key.workspaceId,
    key.keyId,
    added.map((r) => r.id),
    change.now,
  );
  await keyRevokeRoles(
    tx,
    key.keyId,
    removed.map((r) => r.id),
  );
  auditLinks(
    change,
    key,
    "authorization.connect_role_and_key",
    "Connected",
    "role",
    added.map((r) => r.name),
  );
  auditLinks(
    change,
    key,
    "authorization.disconnect_role_and_key",
    "Disconnected",
    "role",
    removed.map((r) => r.name),
  );
  if (added.length === 0 && removed.length === 0) return current;
  return keyRoles(tx, key.keyId);
}

/** Replaces the roles of a key by these roles. */
export async function setKeyRoles(
  tx: Queryable,
  change: Change,
  key: KeyRef,
  roles: readonly RoleRow[],
): Promise<RoleRow[]> {
  const wanted = new Set(roles.map((r) => r.id));
  const current = await keyRoles(tx, key.keyId);
  return changeKeyRoles(
    tx,
    change,
    key,
    roles,
    current.filter((r) => !wanted.has(r.id)),
  );
}
