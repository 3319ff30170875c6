import { UNLIMITED } from "../../domain/credits.js";
import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import {
  identityFindAnyByExternalId,
  identityInsertIfAbsent,
} from "../../storage/queries/identities.js";
import type { Change } from "../mutation.js";

/**
 * The id of the live identity with this externalId, created (and audited) when there is
 * none; concurrent callers converge on one identity. An externalId that belonged to a
 * deleted identity stays reserved: 409. `beforeCreate` runs before an identity is created,
 * and may throw to refuse it. Without an externalId, null.
 */
export async function identityForExternalId(
  tx: Queryable,
  change: Change,
  workspaceId: string,
  externalId: string | undefined,
  beforeCreate?: () => void,
): Promise<string | null> {
  if (externalId === undefined) return null;
  let identity = await identityFindAnyByExternalId(tx, workspaceId, externalId);
  if (!identity) {
    beforeCreate?.();
    const id = newId("id");
    const row = {
      id,
      workspaceId,
      externalId,
      meta: null,
      createdAt: change.now,
      updatedAt: null,
      deletedAt: null,
      ...UNLIMITED,
    };
    if (await identityInsertIfAbsent(tx, row)) {
      change.audit({
        event: "identity.create",
        resourceType: "identity",
        resourceId: id,
        description: `Created identity ${id} (${externalId}) for a key.`,
      });
      change.emit({ type: "identity.created", data: { identityId: id, externalId } }, workspaceId);
      return id;
    }
    identity = await identityFindAnyByExternalId(tx, workspaceId, externalId);
  }
  if (!identity || identity.deletedAt !== null) {
    throw errors.identityAlreadyExists(externalId);
  }
  return identity.id;
}
