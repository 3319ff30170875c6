import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CreateKeyRequest,
  CreateKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { newId } from "../../domain/ids.js";
import { generateKey, keyStart } from "../../domain/key-material.js";
import { errors } from "../../errors/service-error.js";
import { findApi, lockLiveApi } from "../apis/find-api.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { storedMeta } from "../identities/view.js";
import { mutate } from "../mutation.js";
import { lastPerName, settingsFromRequest } from "../ratelimit-settings.js";
import { checkCredits, creditState } from "./credits-input.js";
import { distinct, RECOVERABLE_UNSUPPORTED } from "./find-key.js";
import { resolveRoles } from "./grants.js";
import { identityForExternalId } from "./identity-link.js";
import { insertNewKey } from "./insert-key.js";

const DEFAULT_BYTE_LENGTH = 16;

/**
 * Issues a key for an API with every setting a key has. The secret is generated from the
 * CSPRNG, returned once, and stored only as its SHA-256 and displayable start. Roles must
 * exist (404 otherwise, nothing written); missing permissions and identities are created.
 */
export async function createKey(
  deps: Deps,
  req: CreateKeyRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof CreateKeyResponseSchema>> {
  checkCredits(req.credits, "/credits");
  const { workspaceId } = principalOf(ctx);
  const api = await findApi(deps, workspaceId, req.apiId);
  authorize(ctx, { apiId: api.id });
  if (req.recoverable) throw errors.preconditionFailed(RECOVERABLE_UNSUPPORTED);
  const secret = generateKey(req.prefix, req.byteLength ?? DEFAULT_BYTE_LENGTH);
  const id = newId("key");
  await mutate(deps, ctx, async (tx, change) => {
    await lockLiveApi(tx, workspaceId, api.id);
    const roles = await resolveRoles(tx, workspaceId, distinct(req.roles));
    const identityId =
      req.externalId === undefined
        ? null
        : await identityForExternalId(tx, change, workspaceId, req.externalId);
    const row = {
      id,
      workspaceId,
      apiId: api.id,
      hash: deps.config.keyHashing.stored(secret),
      start: keyStart(secret, req.prefix),
      prefix: req.prefix ?? null,
      byteLength: req.byteLength ?? DEFAULT_BYTE_LENGTH,
      name: req.name ?? null,
      identityId,
      meta: storedMeta(req.meta),
      expiresAt: req.expires === undefined ? null : Number(req.expires),
      enabled: req.enabled ?? true,
      ...creditState(req.credits, change.now),
      creditsKeyId: null,
      migrationId: null,
      createdAt: change.now,
      updatedAt: null,
    };
    const ratelimits = lastPerName(settingsFromRequest(req.ratelimits));
    const permissions = distinct(req.permissions);
    await insertNewKey(
      tx,
      change,
      { row, ratelimits, permissions, roles },
      `Created key ${id} in API ${api.id}.`,
    );
  });
  return { data: { keyId: id, key: secret } };
}
