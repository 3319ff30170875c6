import { type KeyRecordRow, keyRecordByHash } from "../../storage/queries/key-records.js";
import type { Deps } from "../deps.js";

/**
 * The verification record of the live key with this secret hash, through the in-process
 * cache: one query on a miss, none on a hit. Misses are cached too ("no such key"), and
 * every change that can alter a record (or create this hash) invalidates it on every node.
 */
export function verificationRecord(deps: Deps, hash: string): Promise<KeyRecordRow | null> {
  return deps.caches.keys.load(hash, async () => (await keyRecordByHash(deps.db, hash)) ?? null);
}
