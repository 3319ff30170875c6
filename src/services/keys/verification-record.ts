import { keyInApi, keyInWorkspace } from "../../cache/caches.js";
import {
  type KeyRecordRow,
  type KeyScope,
  keyRecordByHashes,
  keyRehash,
} from "../../storage/queries/key-records.js";
import type { Deps } from "../deps.js";
import { mutateAs } from "../mutation.js";

/** The `keys` cache entry of a lookup of the secret whose plain SHA-256 is `plain` in `scope`. */
export function recordEntry(scope: KeyScope, plain: string): string {
  return scope.apiId === undefined
    ? keyInWorkspace(scope.workspaceId, plain)
    : keyInApi(scope.apiId, plain);
}

/**
 * The verification record of the live key of `scope` with this secret, through the
 * in-process cache entry `entry` (`recordEntry(scope, plain)`, `plain` being
 * `hashKey(secret)`): one hash and one map lookup on a hit, whatever form the key is stored
 * in. A caller may look in the entry first (`caches.keys.get`) and call this on a miss. A miss looks the key up in the scope under every stored form it may have (plain
 * SHA-256, the current and previous peppers) in one query. Misses are cached too ("no such
 * key"), and every change that can alter a record (or create this hash in the scope)
 * invalidates it on every node. A key found under a previous pepper is stored again under
 * the current one, in the background.
 */
export function verificationRecord(
  deps: Deps,
  scope: KeyScope,
  secret: string,
  plain: string,
  entry: string,
): Promise<KeyRecordRow | null> {
  return deps.caches.keys.load(entry, async () => {
    const hashing = deps.config.keyHashing;
    const found = await keyRecordByHashes(deps.db, scope, hashing.candidates(secret, plain));
    if (!found) return null;
    const { record, storedHash } = found;
    // Invalidations name the stored hash: let them find this entry.
    if (storedHash !== plain) deps.caches.keyAliases.set(storedHash, plain);
    if (hashing.isStale(storedHash)) {
      const to = hashing.stored(secret);
      deps.caches.keyAliases.set(to, plain);
      void moveToCurrentPepper(deps, record.id, storedHash, to);
    }
    return record;
  });
}

/**
 * Stores a key under the current pepper, so an old pepper can be retired once every key
 * it hashed was used. Other nodes drop their entry (they know it by the old hash). A
 * failure only leaves the key where it was, still verifying; it is logged without hashes.
 */
async function moveToCurrentPepper(
  deps: Deps,
  id: string,
  from: string,
  to: string,
): Promise<void> {
  try {
    const actor = { type: "system" as const, id: "rehash", workspaceId: "", requestId: null };
    await mutateAs(deps, actor, async (tx, change) => {
      const moved = await keyRehash(tx, id, from, to);
      if (moved) change.invalidate({ kind: "key", ...moved, id, hash: from });
    });
  } catch (err) {
    deps.log.warn(
      { keyId: id, code: (err as { code?: unknown }).code },
      "could not store key under the current pepper",
    );
  }
}
