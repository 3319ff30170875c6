import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  MigrateKeysRequest,
  MigrateKeysResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { distinct } from "../../domain/distinct.js";
import { newId } from "../../domain/ids.js";
import { normalizeKeyHash } from "../../domain/key-material.js";
import { catalog } from "../../errors/catalog.js";
import { errors, ServiceError, type Violation } from "../../errors/service-error.js";
import { type KeyRow, keysExistingHashes } from "../../storage/queries/keys.js";
import { findApi, lockLiveApi } from "../apis/find-api.js";
import { authorize, beforeCreating } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { storedMeta } from "../identities/view.js";
import { mutate } from "../mutation.js";
import { ensurePermissions } from "../permissions/slugs.js";
import { lastPerName, settingsFromRequest } from "../ratelimit-settings.js";
import { checkCredits, creditState } from "./credits-input.js";
import { grantCases } from "./grant-cases.js";
import { resolveRoles } from "./grants.js";
import { identityForExternalId } from "./identity-link.js";
import { insertKey } from "./insert-key.js";

/**
 * Imports up to 100 keys of another system by the SHA-256 of their secret (base64 or hex):
 * they verify at once. A hash that a key of this workspace has already (deleted ones too) or
 * that comes twice in the request is reported in `failed` and skipped. Other workspaces'
 * keys are never looked at: whether they hold a hash is not this tenant's to learn. Unknown
 * roles are 404 and nothing is written; missing identities and permissions are created.
 * Beyond api.<apiId>.create_key, any key with roles needs rbac.*.add_role_to_key, with
 * permissions rbac.*.add_permission_to_key, creating a permission rbac.*.create_permission
 * and an identity identity.*.create_identity: decided from the request before anything is
 * written.
 */
export async function migrateKeys(
  deps: Deps,
  req: MigrateKeysRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof MigrateKeysResponseSchema>> {
  const violations: Violation[] = [];
  const hashes = req.keys.map((k, i) => {
    const h = normalizeKeyHash(k.hash);
    if (h === null)
      violations.push({
        location: `/keys/${i}/hash`,
        message: "must be a SHA-256 in base64 (44 characters) or hex (64)",
      });
    return h as string;
  });
  if (violations.length > 0) throw errors.invalidInput(violations);
  for (const [i, k] of req.keys.entries()) checkCredits(k.credits, `/keys/${i}/credits`);
  const { workspaceId } = principalOf(ctx);
  const api = await findApi(deps, workspaceId, req.apiId);
  const cases = await grantCases(deps.db, workspaceId, {
    roles: { names: req.keys.flatMap((k) => k.roles), replace: false },
    permissions: { names: distinct(req.keys.flatMap((k) => k.permissions)), replace: false },
    externalIds: distinct(req.keys.flatMap((k) => k.externalId ?? [])),
  });
  authorize(ctx, { apiId: api.id }, cases);
  // The heaviest write there is (up to 110,000 grants and as many audit records in one
  // transaction): a workspace runs a few at once at most, so that one tenant's migration
  // cannot take every connection and the database's CPU from the others.
  const cap = deps.config.migrateKeysMaxConcurrentPerWorkspace;
  const release = deps.slots.migrateKeys.take(workspaceId);
  if (!release) throw migrationsBusy(cap);
  try {
    return { data: await migrate(deps, ctx, req, workspaceId, api.id, hashes) };
  } finally {
    release();
  }
}

function migrationsBusy(cap: number): ServiceError {
  return new ServiceError(
    catalog.workspaceRateLimited,
    `This workspace runs ${cap} key migration${cap === 1 ? "" : "s"} at once already; retry when it has finished.`,
  );
}

/** The transaction of migrateKeys: every key with its grants, or nothing. */
function migrate(
  deps: Deps,
  ctx: HandlerContext,
  req: MigrateKeysRequest,
  workspaceId: string,
  apiId: string,
  hashes: string[],
) {
  return mutate(deps, ctx, async (tx, change) => {
    await lockLiveApi(tx, workspaceId, apiId);
    const roles = await resolveRoles(tx, workspaceId, distinct(req.keys.flatMap((k) => k.roles)));
    // Every key's permissions resolved (and created) at once, not key by key.
    const slugs = distinct(req.keys.flatMap((k) => k.permissions));
    const created = beforeCreating(ctx, { apiId }, "createPermissions");
    const bySlug = new Map(
      (await ensurePermissions(tx, change, workspaceId, slugs, created)).map((p) => [p.slug, p]),
    );
    const beforeCreatingIdentity = beforeCreating(ctx, { apiId }, "createIdentity");
    const taken = new Set(await keysExistingHashes(tx, workspaceId, hashes));
    const migrated: { hash: string; keyId: string }[] = [];
    const failed: string[] = [];
    for (const [i, k] of req.keys.entries()) {
      const hash = hashes[i] as string;
      if (taken.has(hash)) {
        failed.push(k.hash);
        continue;
      }
      taken.add(hash);
      const id = newId("key");
      const identityId = await identityForExternalId(
        tx,
        change,
        workspaceId,
        k.externalId,
        beforeCreatingIdentity,
      );
      const ids = { id, workspaceId, apiId, hash, identityId };
      const row = migratedRow(k, ids, req.migrationId, change.now);
      const keyRoles = roles.filter((r) => k.roles.includes(r.name));
      const inserted = await insertKey(
        tx,
        change,
        {
          row,
          ratelimits: lastPerName(settingsFromRequest(k.ratelimits)),
          permissions: { rows: distinct(k.permissions).flatMap((p) => bySlug.get(p) ?? []) },
          roles: keyRoles,
        },
        `Migrated key ${id} into API ${apiId} (migration ${req.migrationId}).`,
      );
      if (inserted) migrated.push({ hash: k.hash, keyId: id });
      else failed.push(k.hash);
    }
    return { migrated, failed };
  });
}

/** The stored row of one migrated key. */
function migratedRow(
  k: MigrateKeysRequest["keys"][number],
  ids: Pick<KeyRow, "id" | "workspaceId" | "apiId" | "hash" | "identityId">,
  migrationId: string,
  now: number,
): KeyRow {
  return {
    ...ids,
    start: "",
    prefix: null,
    byteLength: null,
    name: k.name ?? null,
    meta: storedMeta(k.meta),
    expiresAt: k.expires === undefined ? null : Number(k.expires),
    enabled: k.enabled ?? true,
    ...creditState(k.credits, now),
    creditsKeyId: null,
    migrationId,
    createdAt: now,
    updatedAt: null,
    allowedCidrs: null,
  };
}
