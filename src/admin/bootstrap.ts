import { newId } from "../domain/ids.js";
import { hashKey } from "../domain/key-material.js";
import { ALL_PERMISSIONS } from "../domain/root-permissions.js";
import type { Logger } from "../log.js";
import type { Deps } from "../services/deps.js";
import { mutateAs } from "../services/mutation.js";
import { rootKeyCount, rootKeyFindByHash } from "../storage/queries/root-keys.js";
import { workspaceEnsureDefault } from "../storage/queries/workspaces.js";
import { insertRootKey } from "./root-keys.js";

/** Serialises the bootstrap of processes starting at the same time. */
const BOOTSTRAP_LOCK_ID = 727_274_002;

/**
 * Makes sure the default workspace exists and that someone can call the API:
 * with `ROOT_KEY`, that key exists with `*.*.*` in the default workspace (idempotent);
 * without it, the first start on a database that never had a root key creates one and
 * returns its secret so the caller can print it once. Safe when processes race.
 */
export async function bootstrap(
  deps: Pick<Deps, "db" | "bus" | "clock">,
  rootKey: string | undefined,
  log: Logger,
): Promise<string | undefined> {
  const actor = { type: "system" as const, id: "bootstrap", workspaceId: "", requestId: null };
  return mutateAs(deps, actor, async (tx, change) => {
    await tx.query("select pg_advisory_xact_lock($1)", [BOOTSTRAP_LOCK_ID]);
    const ws = await workspaceEnsureDefault(tx, {
      id: newId("ws"),
      name: "default",
      createdAt: change.now,
    });
    if (rootKey !== undefined) {
      const existing = await rootKeyFindByHash(tx, hashKey(rootKey));
      if (existing) {
        if (existing.revokedAt !== null)
          log.warn({ rootKeyId: existing.id }, "ROOT_KEY is revoked");
        return undefined;
      }
      await insertRootKey(tx, change, {
        workspaceId: ws.id,
        permissions: [ALL_PERMISSIONS],
        name: "ROOT_KEY",
        secret: rootKey,
      });
      return undefined;
    }
    if ((await rootKeyCount(tx)) > 0) return undefined;
    const created = await insertRootKey(tx, change, {
      workspaceId: ws.id,
      permissions: [ALL_PERMISSIONS],
      name: "first start",
    });
    return created?.secret;
  });
}
