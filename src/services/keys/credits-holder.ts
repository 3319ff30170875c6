import type { Queryable } from "../../storage/db.js";
import { type KeyRow, keyFindForUpdate, keyWrite } from "../../storage/queries/keys.js";
import type { Change } from "../mutation.js";

/**
 * The key holding a key's balance, locked: the key itself, or, for a rerolled key in its
 * grace period, the key it was replaced by (the two share one balance).
 */
export async function creditsHolder(tx: Queryable, key: KeyRow): Promise<KeyRow> {
  if (key.creditsKeyId === null) return key;
  const holder = await keyFindForUpdate(tx, key.creditsKeyId);
  if (!holder) throw new Error(`credits holder ${key.creditsKeyId} of ${key.id} is missing`);
  return holder;
}

/** Writes a changed holder (when it is not the key itself) and declares its invalidation. */
export async function writeHolder(
  tx: Queryable,
  change: Change,
  key: KeyRow,
  holder: KeyRow,
): Promise<void> {
  if (holder.id === key.id) return;
  holder.updatedAt = change.now;
  await keyWrite(tx, holder);
  change.invalidate({
    kind: "key",
    workspaceId: holder.workspaceId,
    id: holder.id,
    hash: holder.hash,
  });
}
