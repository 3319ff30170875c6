import { newId } from "../domain/ids.js";
import type { KeyHashing } from "../domain/key-hashing.js";
import { hashKey } from "../domain/key-material.js";
import { ALL_PERMISSIONS } from "../domain/root-permissions.js";
import type { Logger } from "../log.js";
import type { Deps } from "../services/deps.js";
import { type EnvironmentRootKey, environmentRootKey } from "../services/environment-root-key.js";
import { type Change, mutateAs } from "../services/mutation.js";
import type { Queryable } from "../storage/db.js";
import {
  rootKeyCount,
  rootKeyFindByHash,
  rootKeyRetireEnvironmentRows,
} from "../storage/queries/root-keys.js";
import { workspaceEnsureDefault } from "../storage/queries/workspaces.js";
import { insertRootKey } from "./root-keys.js";

/** Serialises the bootstrap of processes starting at the same time. */
const BOOTSTRAP_LOCK_ID = 727_274_002;

/** What the start-up bootstrap found or made. */
export interface Bootstrapped {
  /** The secret of the root key made on a first start without ROOT_KEY, to print once. */
  createdSecret?: string;
  /** The environment's ROOT_KEY, to authenticate in memory; undefined without one. */
  environmentRootKey?: EnvironmentRootKey;
}

/**
 * Makes sure the default workspace exists and that someone can call the API. With
 * `ROOT_KEY`, that key acts with `*.*.*` in the default workspace from memory: nothing of
 * it is stored, and root keys that earlier versions stored for it are retired (a ROOT_KEY
 * that was revoked stays refused). Without it, the first start on a database that never
 * had a root key creates one and returns its secret. `keep`, when given, receives that secret
 * before the key is committed: if it throws (a file it cannot write), nothing is stored.
 * Safe when processes race.
 */
export async function bootstrap(
  deps: Pick<Deps, "db" | "bus" | "clock"> & { keyHashing?: KeyHashing },
  rootKey: string | undefined,
  log: Logger,
  keep?: (secret: string) => Promise<void>,
): Promise<Bootstrapped> {
  const actor = { type: "system" as const, id: "bootstrap", workspaceId: "", requestId: null };
  return mutateAs(deps, actor, async (tx, change) => {
    await tx.query("select pg_advisory_xact_lock($1)", [BOOTSTRAP_LOCK_ID]);
    const ws = await workspaceEnsureDefault(tx, {
      id: newId("ws"),
      name: "default",
      createdAt: change.now,
    });
    if (rootKey !== undefined) {
      if (await environmentKeyRevoked(tx, change, rootKey)) {
        log.warn("ROOT_KEY was revoked and is refused; set a new one");
        return {};
      }
      return { environmentRootKey: environmentRootKey(rootKey, ws.id) };
    }
    if ((await rootKeyCount(tx)) > 0) return {};
    const created = await insertRootKey(
      tx,
      change,
      { workspaceId: ws.id, permissions: [ALL_PERMISSIONS], name: "first start" },
      deps.keyHashing,
    );
    if (!created) return {};
    await keep?.(created.secret);
    return { createdSecret: created.secret };
  });
}

/**
 * Retires the rows earlier versions stored for ROOT_KEY (audited as revocations) and says
 * whether this ROOT_KEY was revoked by an operator while it had a row.
 */
async function environmentKeyRevoked(
  tx: Queryable,
  change: Change,
  rootKey: string,
): Promise<boolean> {
  const plain = hashKey(rootKey);
  const retired = await rootKeyRetireEnvironmentRows(tx, plain, change.now);
  for (const r of retired.filter((r) => r.wasLive)) {
    change.audit({
      workspaceId: r.workspaceId,
      event: "rootKey.revoke",
      resourceType: "rootKey",
      resourceId: r.id,
      description: `Revoked root key ${r.id}: ROOT_KEY now acts from the environment and is not stored.`,
    });
  }
  if (retired.length > 0) change.invalidate({ kind: "rootKeys" });
  // A revoked row keeps its hash so that the revocation holds.
  const revoked = await rootKeyFindByHash(tx, plain);
  return revoked !== undefined && revoked.revokedAt !== null;
}
