import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import {
  type IdentityRef,
  type IdentityRow,
  identityFind,
} from "../../storage/queries/identities.js";

/**
 * Loads the live identity a request names, in the workspace; 404 when there is none.
 * `lock`: row-locked for the rest of the transaction (see identityFind).
 */
export async function findIdentity(
  q: Queryable,
  workspaceId: string,
  ref: IdentityRef,
  lock = false,
): Promise<IdentityRow> {
  const row = await identityFind(q, workspaceId, ref, lock);
  if (!row) throw errors.identityNotFound();
  return row;
}
