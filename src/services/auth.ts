import { timingSafeEqual } from "node:crypto";
import type { HandlerContext } from "@connectrpc/connect";
import { hashKey } from "../domain/key-material.js";
import { rootPermissionsAllow, rootPermittedIds } from "../domain/root-permissions.js";
import { errors } from "../errors/service-error.js";
import {
  type RootKeyRow,
  rootKeyFindByHashes,
  rootKeyRehash,
} from "../storage/queries/root-keys.js";
import { callOf, type Principal } from "./call.js";
import type { Deps } from "./deps.js";
import { mutateAs } from "./mutation.js";
import { fillPermission, procedureOf } from "./procedures.js";

/**
 * Resolves a root key secret to its principal: the environment's ROOT_KEY (compared in
 * constant time, never stored), else a stored root key under any form its secret may be
 * stored in. Unknown, revoked and expired keys are all 401 `authentication:key_not_found`,
 * with one message, so a caller learns nothing about which. Lookups (hits and misses) are
 * cached by the secret's plain SHA-256 and invalidated on every root key change.
 */
export async function authenticateRootKey(deps: Deps, secret: string): Promise<Principal> {
  const plain = hashKey(secret);
  const env = deps.environmentRootKey;
  if (env && timingSafeEqual(env.hash, Buffer.from(plain, "base64"))) return env.principal;
  const row = await deps.caches.rootKeys.load(plain, () => findRootKey(deps, secret, plain));
  if (!row || row.revokedAt !== null) throw errors.rootKeyNotFound();
  if (row.expiresAt !== null && row.expiresAt <= deps.clock.now()) throw errors.rootKeyNotFound();
  return { rootKeyId: row.id, workspaceId: row.workspaceId, permissions: row.permissions };
}

/** The stored root key with this secret, or null; one found under an old pepper moves. */
async function findRootKey(deps: Deps, secret: string, plain: string): Promise<RootKeyRow | null> {
  const hashing = deps.config.keyHashing;
  const row = await rootKeyFindByHashes(deps.db, hashing.candidates(secret, plain));
  if (!row) return null;
  if (hashing.isStale(row.hash)) void moveRootKey(deps, row.id, row.hash, hashing.stored(secret));
  return row;
}

/** Stores a root key under the current pepper; a failure leaves it verifying where it was. */
async function moveRootKey(deps: Deps, id: string, from: string, to: string): Promise<void> {
  try {
    const actor = { type: "system" as const, id: "rehash", workspaceId: "", requestId: null };
    await mutateAs(deps, actor, async (tx, change) => {
      if (await rootKeyRehash(tx, id, from, to)) change.invalidate({ kind: "rootKeys" });
    });
  } catch (err) {
    deps.log.warn(
      { rootKeyId: id, code: (err as { code?: unknown }).code },
      "could not store root key under the current pepper",
    );
  }
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

/**
 * For a list procedure whose permission in the procedures table names each row's id in
 * its middle segment (`identity.{identityId}.read_identity`): the ids of the rows the caller
 * may read, `"all"` when a grant covers every id. The procedure filters its query on these
 * ids, so a page holds only readable rows and is full whenever more exist. A caller whose
 * grants allow the action on no id at all gets 403 naming the wildcard form.
 */
export function authorizeRows(ctx: HandlerContext, placeholder: string): "all" | string[] {
  const { name, procedure } = procedureOf(ctx.method);
  const template = procedure.permission;
  const [resource, id, action, extra] = typeof template === "string" ? template.split(".") : [];
  if (id !== `{${placeholder}}` || resource === undefined || action === undefined || extra)
    throw new TypeError(`${name} has no permission of the form resource.{${placeholder}}.action`);
  const principal = callOf(ctx.values).principal;
  const ids = principal ? rootPermittedIds(principal.permissions, resource, action) : [];
  if (ids !== "all" && ids.length === 0)
    throw errors.insufficientPermissions(`${resource}.*.${action}`);
  return ids;
}

/**
 * A check to run just before a procedure creates a permission or an identity inside its
 * transaction: what the request names may have been deleted since it was authorized, and the
 * 403 then rolls the transaction back, so a caller without the grant never creates one.
 */
export function beforeCreating(
  ctx: HandlerContext,
  vars: Readonly<Record<string, string>>,
  creates: "createPermissions" | "createIdentity",
): () => void {
  return () => authorize(ctx, vars, [creates]);
}
