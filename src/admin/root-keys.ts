import { newId } from "../domain/ids.js";
import type { KeyHashing } from "../domain/key-hashing.js";
import { generateKey, hashKey, keyStart } from "../domain/key-material.js";
import type { Change } from "../services/mutation.js";
import type { Queryable } from "../storage/db.js";
import { rootKeyInsert } from "../storage/queries/root-keys.js";

/** Prefix of generated root keys: `root_<base58>`. */
const ROOT_KEY_PREFIX = "root";
/** 24 random bytes: 192 bits. */
const ROOT_KEY_BYTES = 24;

/** A root key to store, with a generated secret. */
export interface NewRootKey {
  workspaceId: string;
  permissions: string[];
  name: string | null;
}

/**
 * Stores a new root key (hash and start only) inside a mutation, with its audit record and
 * invalidation. The hash is under the current pepper when `hashing` has one, else plain
 * SHA-256. Returns the id and the secret, or undefined when the secret exists already.
 */
export async function insertRootKey(
  tx: Queryable,
  change: Change,
  k: NewRootKey,
  hashing?: KeyHashing,
): Promise<{ id: string; secret: string } | undefined> {
  const secret = generateKey(ROOT_KEY_PREFIX, ROOT_KEY_BYTES);
  const id = newId("rk");
  const inserted = await rootKeyInsert(tx, {
    id,
    workspaceId: k.workspaceId,
    hash: hashing ? hashing.stored(secret) : hashKey(secret),
    start: keyStart(secret, ROOT_KEY_PREFIX),
    name: k.name,
    permissions: k.permissions,
    createdAt: change.now,
    expiresAt: null,
    revokedAt: null,
  });
  if (!inserted) return undefined;
  change.audit({
    workspaceId: k.workspaceId,
    event: "rootKey.create",
    resourceType: "rootKey",
    resourceId: id,
    description: `Created root key ${id} with ${k.permissions.join(", ")}.`,
  });
  change.invalidate({ kind: "rootKeys" });
  return { id, secret };
}
