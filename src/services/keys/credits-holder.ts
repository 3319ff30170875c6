import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import {
  type CreditDependent,
  type KeyRow,
  keyCreditDependents,
  keyFindForUpdate,
  keyWrite,
} from "../../storage/queries/keys.js";
import type { Change } from "../mutation.js";

/**
 * The key holding a key's balance, locked: the key itself, or, for a rerolled key in its
 * grace period, the key it was replaced by (the two share one balance). A holder that cannot
 * be found breaks an invariant of the schema: 500, with the ids kept in the logged cause.
 */
export async function creditsHolder(tx: Queryable, key: KeyRow): Promise<KeyRow> {
  if (key.creditsKeyId === null) return key;
  const holder = await keyFindForUpdate(tx, key.creditsKeyId);
  if (!holder) {
    throw errors.unexpected(
      new Error(`credits holder ${key.creditsKeyId} of ${key.id} is missing`),
    );
  }
  return holder;
}

/**
 * Writes a changed holder (when it is not the key itself) and declares the invalidations:
 * the holder's, and those of every key that spends its balance, whose cached records carry
 * the holder's balance and refill settings.
 */
export async function writeHolder(
  tx: Queryable,
  change: Change,
  key: KeyRow,
  holder: KeyRow,
): Promise<void> {
  if (holder.id !== key.id) {
    holder.updatedAt = change.now;
    await keyWrite(tx, holder);
    change.invalidate({
      kind: "key",
      workspaceId: holder.workspaceId,
      apiId: holder.apiId,
      id: holder.id,
      hash: holder.hash,
    });
  }
  invalidateKeys(change, await keyCreditDependents(tx, holder.id, change.now));
}

/**
 * Declares the invalidation of keys whose credits moved with another key's change. A cached
 * record names the key it spends from and carries that key's balance: left stale, it would
 * spend from a key that no longer holds the balance (free, as that key now reads unlimited)
 * or skip spending altogether.
 */
export function invalidateKeys(change: Change, keys: readonly CreditDependent[]): void {
  for (const k of keys) {
    const { workspaceId, apiId, id, hash } = k;
    change.invalidate({ kind: "key", workspaceId, apiId, id, hash });
  }
}
