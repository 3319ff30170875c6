import type { HandlerContext } from "@connectrpc/connect";
import { hashKey } from "../domain/key-material.js";
import { rootPermissionsAllow } from "../domain/root-permissions.js";
import { errors } from "../errors/service-error.js";
import { rootKeyFindByHash } from "../storage/queries/root-keys.js";
import { callOf, type Principal } from "./call.js";
import type { Deps } from "./deps.js";
import { fillPermission, procedureOf } from "./procedures.js";

/**
 * Resolves a root key secret to its principal. Unknown, revoked and expired keys are
 * all 401 `authentication:key_not_found`, with one message, so a caller learns nothing
 * about which. Lookups (hits and misses) are cached and invalidated on every root key change.
 */
export async function authenticateRootKey(deps: Deps, secret: string): Promise<Principal> {
  const hash = hashKey(secret);
  const row = await deps.caches.rootKeys.load(
    hash,
    async () => (await rootKeyFindByHash(deps.db, hash)) ?? null,
  );
  if (!row || row.revokedAt !== null) throw errors.rootKeyNotFound();
  if (row.expiresAt !== null && row.expiresAt <= deps.clock.now()) throw errors.rootKeyNotFound();
  return { rootKeyId: row.id, workspaceId: row.workspaceId, permissions: row.permissions };
}

/**
 * Checks that the caller holds the permissions the procedures table names for this
 * procedure, filled with the ids the procedure resolved, plus those of the `cases` that
 * apply to this call. Throws 403 naming the first permission missing.
 */
export function authorize(
  ctx: HandlerContext,
  vars: Readonly<Record<string, string>> = {},
  cases: readonly string[] = [],
): void {
  const { name, procedure } = procedureOf(ctx.method);
  const base = procedure.permission;
  const templates = base === undefined ? [] : typeof base === "string" ? [base] : [...base];
  for (const c of cases) {
    const extra = procedure.when?.[c];
    if (extra === undefined) throw new TypeError(`${name} has no permission case ${c}`);
    templates.push(extra);
  }
  const principal = callOf(ctx.values).principal;
  for (const template of templates) {
    const required = fillPermission(template, vars);
    if (!principal || !rootPermissionsAllow(principal.permissions, required)) {
      throw errors.insufficientPermissions(required);
    }
  }
}
