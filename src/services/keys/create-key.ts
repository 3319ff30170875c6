import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CreateKeyRequest,
  CreateKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { distinct } from "../../domain/distinct.js";
import { newId } from "../../domain/ids.js";
import { generateKey, keyStart } from "../../domain/key-material.js";
import { storedCidrs } from "../../domain/networks.js";
import { errors } from "../../errors/service-error.js";
import type { KeyRow } from "../../storage/queries/keys.js";
import { findApi, lockLiveApi } from "../apis/find-api.js";
import { authorize, beforeCreating } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { storedMeta } from "../identities/view.js";
import { mutate } from "../mutation.js";
import { lastPerName, settingsFromRequest } from "../ratelimit-settings.js";
import { checkCredits, creditState } from "./credits-input.js";
import { RECOVERABLE_UNSUPPORTED } from "./find-key.js";
import { grantCases } from "./grant-cases.js";
import { resolveRoles } from "./grants.js";
import { identityForExternalId } from "./identity-link.js";
import { insertNewKey } from "./insert-key.js";

const DEFAULT_BYTE_LENGTH = 16;

/**
 * Issues a key for an API with every setting a key has. The secret is generated from the
 * CSPRNG in the API's key format, returned once, and stored only as its SHA-256 and displayable start. Roles must
 * exist (404 otherwise, nothing written); missing permissions and identities are created.
 * Beyond api.<apiId>.create_key, roles need rbac.*.add_role_to_key, permissions
 * rbac.*.add_permission_to_key, creating a permission rbac.*.create_permission and creating
 * an identity identity.*.create_identity (403 before anything is written).
 */
export async function createKey(
  deps: Deps,
  req: CreateKeyRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof CreateKeyResponseSchema>> {
  checkCredits(req.credits, "/credits");
  const { workspaceId } = principalOf(ctx);
  const api = await findApi(deps, workspaceId, req.apiId);
  const vars = { apiId: api.id };
  await authorizeCreate(deps, ctx, req, vars);
  if (req.recoverable) throw errors.preconditionFailed(RECOVERABLE_UNSUPPORTED);
  const id = newId("key");
  const secret = await mutate(deps, ctx, async (tx, change) => {
    const live = await lockLiveApi(tx, workspaceId, api.id);
    const secret = generateKey(req.prefix, req.byteLength ?? DEFAULT_BYTE_LENGTH, live.keyFormat);
    const roles = await resolveRoles(tx, workspaceId, distinct(req.roles));
    const identityId = await identityForExternalId(
      tx,
      change,
      workspaceId,
      req.externalId,
      beforeCreating(ctx, vars, "createIdentity"),
    );
    const ids = { id, workspaceId, apiId: api.id, identityId };
    const row = keyRow(deps, req, ids, secret, change.now);
    const ratelimits = lastPerName(settingsFromRequest(req.ratelimits));
    const permissions = distinct(req.permissions);
    const beforeCreatingPermissions = beforeCreating(ctx, vars, "createPermissions");
    await insertNewKey(
      tx,
      change,
      { row, ratelimits, permissions, roles, beforeCreatingPermissions },
      `Created key ${id} in API ${api.id}.`,
    );
    return secret;
  });
  return { data: { keyId: id, key: secret } };
}

/**
 * Checks create_key and the grants what the request attaches needs (its roles, permissions and
 * externalId), from the request alone: a 403 comes before anything is written.
 */
async function authorizeCreate(
  deps: Deps,
  ctx: HandlerContext,
  req: CreateKeyRequest,
  vars: { apiId: string },
): Promise<void> {
  const cases = await grantCases(deps.db, principalOf(ctx).workspaceId, {
    roles: { names: req.roles, replace: false },
    permissions: { names: distinct(req.permissions), replace: false },
    externalIds: req.externalId === undefined ? [] : [req.externalId],
  });
  authorize(ctx, vars, cases);
}

/** The stored row of the key a request creates. */
function keyRow(
  deps: Deps,
  req: CreateKeyRequest,
  ids: Pick<KeyRow, "id" | "workspaceId" | "apiId" | "identityId">,
  secret: string,
  now: number,
): KeyRow {
  return {
    ...ids,
    hash: deps.config.keyHashing.stored(secret),
    start: keyStart(secret, req.prefix),
    prefix: req.prefix ?? null,
    byteLength: req.byteLength ?? DEFAULT_BYTE_LENGTH,
    name: req.name ?? null,
    meta: storedMeta(req.meta),
    expiresAt: req.expires === undefined ? null : Number(req.expires),
    enabled: req.enabled ?? true,
    ...creditState(req.credits, now),
    creditsKeyId: null,
    migrationId: null,
    createdAt: now,
    updatedAt: null,
    allowedCidrs: storedCidrs(req.allowedCidrs),
  };
}
