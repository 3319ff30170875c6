import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  RerollKeyRequest,
  RerollKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { changeEntry } from "../../domain/credit-ledger.js";
import { newId } from "../../domain/ids.js";
import { generateKey, keyStart } from "../../domain/key-material.js";
import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import { creditLedgerAppend } from "../../storage/queries/credit-ledger.js";
import { keyDirectPermissions, keyRoles } from "../../storage/queries/key-links.js";
import { keyMoveCreditsPointers, keyWrite } from "../../storage/queries/keys.js";
import { ratelimitsOfKey } from "../../storage/queries/ratelimits.js";
import { lockLiveApi } from "../apis/find-api.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { invalidateKeys } from "./credits-holder.js";
import { findKey } from "./find-key.js";
import { copyCases } from "./grant-cases.js";
import { insertNewKey } from "./insert-key.js";

/**
 * Replaces a key by a new one with the same settings (prefix kept whole, same length,
 * name, identity, meta, expiry, rate limits, roles, permissions). The old key keeps
 * verifying until `now + expiration` (never later than it would have), and spends the new
 * key's credits meanwhile: the two never hold two balances. A key that holds roles or direct
 * permissions needs the grants that giving them to a new key needs (403, nothing written).
 */
export async function rerollKey(
  deps: Deps,
  req: RerollKeyRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof RerollKeyResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, req.keyId);
  authorize(ctx, { apiId: found.apiId });
  const id = newId("key");
  const secret = await mutate(deps, ctx, async (tx, change) => {
    const old = await findKey(tx, workspaceId, req.keyId, true);
    // A key of a deleted API is not found, whatever the reason.
    const api = await lockLiveApi(tx, workspaceId, old.apiId, errors.keyNotFound);
    const prefix = old.prefix ?? undefined;
    // The new key is written in the API's format of now, whatever the old one's was.
    const secret = generateKey(prefix, old.byteLength ?? 16, api.keyFormat);
    // The balance moves to the new key, unless the old key already spends another's.
    const ownsBalance = old.creditsKeyId === null;
    const row = {
      ...old,
      id,
      hash: deps.config.keyHashing.stored(secret),
      start: keyStart(secret, prefix),
      migrationId: null,
      createdAt: change.now,
      updatedAt: null,
      ...(ownsBalance
        ? {}
        : { remaining: null, refillAmount: null, refillDay: null, lastRefillAt: null }),
    };
    const held = await heldBy(tx, old.id);
    // The new key gets the old key's roles and permissions: as much a grant as createKey's
    // fields, so it needs the same grants. Checked on what was read here, before any write.
    authorize(
      ctx,
      { apiId: old.apiId },
      copyCases({ ...held, permissions: held.permissions.rows }),
    );
    await insertNewKey(tx, change, { row, ...held }, `Created key ${id} by rerolling ${old.id}.`);
    if (ownsBalance) {
      invalidateKeys(change, await keyMoveCreditsPointers(tx, old.id, id, change.now));
      // Not a spend: the balance leaves the old key's statement and enters the new key's, so
      // each statement still sums to the balance its key holds (0 for the old one from now).
      await creditLedgerAppend(tx, change.now, [
        changeEntry(old.id, old.remaining, old.remaining, null),
        changeEntry(id, null, null, old.remaining),
      ]);
      Object.assign(old, {
        remaining: null,
        refillAmount: null,
        refillDay: null,
        lastRefillAt: null,
        creditsKeyId: id,
      });
    }
    const graceEnd = change.now + Number(req.expiration);
    old.expiresAt = old.expiresAt === null ? graceEnd : Math.min(old.expiresAt, graceEnd);
    old.updatedAt = change.now;
    await keyWrite(tx, old);
    change.audit({
      event: "key.reroll",
      resourceType: "key",
      resourceId: old.id,
      description: `Rerolled key ${old.id} into ${id}; the old key expires at ${new Date(old.expiresAt).toISOString()}.`,
    });
    change.emit({
      type: "key.rerolled",
      data: {
        keyId: id,
        apiId: old.apiId,
        previousKeyId: old.id,
        previousKeyExpires: old.expiresAt,
      },
    });
    change.invalidate({ kind: "key", workspaceId, apiId: old.apiId, id: old.id, hash: old.hash });
    return secret;
  });
  return { data: { keyId: id, key: secret } };
}

/**
 * What a key holds that its reroll copies: rate limits, direct permissions, roles. The
 * permissions and roles are locked against deletion until the reroll commits: one deleted
 * meanwhile would otherwise be created again (permissions) or break the grant (roles).
 */
async function heldBy(tx: Queryable, keyId: string) {
  const ratelimits = (await ratelimitsOfKey(tx, keyId)).map(
    ({ name, limit, durationMs, autoApply }) => ({ name, limit, durationMs, autoApply }),
  );
  const permissions = { rows: await keyDirectPermissions(tx, keyId, true) };
  const roles = await keyRoles(tx, keyId, true);
  return { ratelimits, permissions, roles };
}
