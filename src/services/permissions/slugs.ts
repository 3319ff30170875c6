import { newId } from "../../domain/ids.js";
import type { Queryable } from "../../storage/db.js";
import {
  type PermissionRow,
  permissionsBySlugs,
  permissionsCreateMissing,
} from "../../storage/queries/permissions.js";
import type { Change } from "../mutation.js";

/** The distinct slugs of a request, in first-seen order. */
export function distinctSlugs(slugs: readonly string[]): string[] {
  return [...new Set(slugs)];
}

/** The slugs that name no permission of the workspace yet. */
export async function missingSlugs(
  q: Queryable,
  workspaceId: string,
  slugs: readonly string[],
): Promise<string[]> {
  const existing = new Set((await permissionsBySlugs(q, workspaceId, slugs)).map((p) => p.slug));
  return slugs.filter((s) => !existing.has(s));
}

/**
 * The permissions with these slugs, creating (and auditing) the ones that do not exist;
 * concurrent callers creating the same slug converge on one row. Sorted by slug.
 * `beforeCreate` runs when some must be created, and may throw to refuse it.
 */
export async function ensurePermissions(
  tx: Queryable,
  change: Change,
  workspaceId: string,
  slugs: readonly string[],
  beforeCreate?: () => void,
): Promise<PermissionRow[]> {
  if (slugs.length === 0) return [];
  const missing = await missingSlugs(tx, workspaceId, slugs);
  if (missing.length > 0) beforeCreate?.();
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
  return permissionsBySlugs(tx, workspaceId, slugs);
}
