import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import { type KeyRow, keyFind } from "../../storage/queries/keys.js";

/**
 * Loads a live key of a live API in the workspace; 404 key_not_found otherwise, whatever
 * the reason (unknown, malformed id, deleted, deleted API, another workspace).
 */
export async function findKey(
  q: Queryable,
  workspaceId: string,
  keyId: string,
  lock = false,
): Promise<KeyRow> {
  const key = await keyFind(q, workspaceId, keyId, lock);
  if (!key) throw errors.keyNotFound();
  return key;
}

/** The answer to `decrypt: true` or `recoverable: true`: recoverable keys are not supported. */
export const RECOVERABLE_UNSUPPORTED =
  "Recoverable keys are not supported: Latchkey stores only the hash of a key, so it cannot return or encrypt the secret.";
