import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import {
  type PermissionRow,
  permissionsBySlugs,
  permissionsCreateMissing,
} from "../../storage/queries/permissions.js";
import type { Change } from "../mutation.js";

/** The slugs that name no permission of the workspace yet. */
export async function missingSlugs(
  q: Queryable,
  workspaceId: string,
  slugs: readonly string[],
): Promise<string[]> {
  const existing = new Set((await permissionsBySlugs(q, workspaceId, slugs)).map((p) => p.slug));
  return slugs.filter((s) => !existing.has(s));
}

/** Rounds of ensurePermissions before it gives up on permissions deleted as it grants them. */
const ENSURE_ROUNDS = 3;

/**
 * The permissions with these slugs, creating (and auditing) the ones that do not exist;
 * concurrent callers creating the same slug converge on one row. Sorted by slug.
 * They are returned locked against deletion for the rest of the transaction, so the caller
 * can grant them; one deleted between its creation check and the lock is created again.
 * `mayCreate` runs before anything is created and throws when the caller may not create
 * permissions: a permission that existed when the caller was authorized may be deleted
 * before this runs.
 */
export async function ensurePermissions(
  tx: Queryable,
  change: Change,
  workspaceId: string,
  slugs: readonly string[],
  mayCreate: () => void = () => {},
): Promise<PermissionRow[]> {
  if (slugs.length === 0) return [];
  const wanted = new Set(slugs).size;
  for (let round = 1; ; round++) {
    const missing = await missingSlugs(tx, workspaceId, slugs);
    if (missing.length > 0) mayCreate();
    const created = await permissionsCreateMissing(
      tx,
      workspaceId,
      missing.map((slug) => ({ id: newId("perm"), slug })),
      change.now,
    );
    for (const p of created) {
      change.audit({
        event: "permission.create",
        resourceType: "permission",
        resourceId: p.id,
        description: `Created permission ${p.slug}.`,
      });
    }
    const found = await permissionsBySlugs(tx, workspaceId, slugs, true);
    if (found.length === wanted) return found;
    if (round === ENSURE_ROUNDS) {
      throw errors.unexpected(new Error(`permissions deleted while granted, ${round} times`));
    }
  }
}
