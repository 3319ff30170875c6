import type { Queryable } from "../../storage/db.js";
import { identityExternalIdsTaken } from "../../storage/queries/identities.js";
import { missingSlugs } from "../permissions/slugs.js";

/** Role names or permission slugs of a request, and whether they replace what the key holds. */
export interface GrantList {
  names: readonly string[];
  /** True for a list that replaces the key's (it may take away whatever the key holds). */
  replace: boolean;
}

/** What a key request names that grants, takes away or creates something. */
export interface GrantRequest {
  roles?: GrantList | undefined;
  permissions?: GrantList | undefined;
  /** ExternalIds the request links keys to; one no identity holds creates an identity. */
  externalIds?: readonly string[] | undefined;
}

/** The permission cases of the key procedures in the procedures table. */
export type GrantCase =
  | "addRoles"
  | "removeRoles"
  | "addPermissions"
  | "removePermissions"
  | "createPermissions"
  | "createIdentity";

/**
 * The permission cases a key request needs beyond its procedure's own permission, decided
 * before anything is written, from what the request names: a non-empty list grants (add);
 * a replacing list needs both add and remove, whatever it holds, since what it takes away
 * depends on the key and not on the request; a slug no permission has needs
 * createPermissions, an externalId no identity has (live or deleted) createIdentity.
 */
export async function grantCases(
  q: Queryable,
  workspaceId: string,
  req: GrantRequest,
): Promise<GrantCase[]> {
  const { roles, permissions } = req;
  const cases: GrantCase[] = [];
  if (roles && (roles.replace || roles.names.length > 0)) cases.push("addRoles");
  if (roles?.replace) cases.push("removeRoles");
  if (permissions && (permissions.replace || permissions.names.length > 0)) {
    cases.push("addPermissions");
  }
  if (permissions?.replace) cases.push("removePermissions");
  if (permissions && (await missingSlugs(q, workspaceId, permissions.names)).length > 0) {
    cases.push("createPermissions");
  }
  const externalIds = req.externalIds ?? [];
  if (externalIds.length > 0) {
    const taken = new Set(await identityExternalIdsTaken(q, workspaceId, externalIds));
    if (externalIds.some((e) => !taken.has(e))) cases.push("createIdentity");
  }
  return cases;
}

/**
 * The permission cases of copying what a key holds to a new key (rerollKey): the copy gives
 * the new key every role and direct permission of the old, as a createKey naming them would.
 */
export function copyCases(held: {
  roles: readonly unknown[];
  permissions: readonly unknown[];
}): GrantCase[] {
  const cases: GrantCase[] = [];
  if (held.roles.length > 0) cases.push("addRoles");
  if (held.permissions.length > 0) cases.push("addPermissions");
  return cases;
}
