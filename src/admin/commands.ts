import { newId } from "../domain/ids.js";
import type { KeyHashing } from "../domain/key-hashing.js";
import type { Deps } from "../services/deps.js";
import { ENVIRONMENT_ROOT_KEY_ID } from "../services/environment-root-key.js";
import { mutateAs } from "../services/mutation.js";
import { type RootKeyRow, rootKeyList, rootKeyRevoke } from "../storage/queries/root-keys.js";
import {
  type WorkspaceRow,
  workspaceFindById,
  workspaceInsert,
  workspaceList,
} from "../storage/queries/workspaces.js";
import { AdminError } from "./errors.js";
import { checkGrantable } from "./grantable.js";
import { insertRootKey } from "./root-keys.js";

export { AdminError } from "./errors.js";

/** What the admin commands use; without `keyHashing`, new root keys get plain SHA-256. */
export type AdminDeps = Pick<Deps, "db" | "bus" | "clock"> & { keyHashing?: KeyHashing };

const cliActor = (workspaceId: string) => ({
  type: "cli" as const,
  id: "cli",
  workspaceId,
  requestId: null,
});

/** Creates a workspace and returns its id. */
export async function createWorkspace(deps: AdminDeps, name: string): Promise<string> {
  if (name.trim() === "" || name.length > 255)
    throw new AdminError("--name must be 1 to 255 characters");
  const id = newId("ws");
  await mutateAs(deps, cliActor(id), async (tx, change) => {
    await workspaceInsert(tx, { id, name, isDefault: false, createdAt: change.now });
    change.audit({
      event: "workspace.create",
      resourceType: "workspace",
      resourceId: id,
      description: `Created workspace ${id}.`,
    });
    // Every node stops treating the instance as a one-workspace one.
    change.invalidate({ kind: "workspaces" });
  });
  return id;
}

/**
 * Refuses a root key's permissions when there are none or one names nothing a procedure
 * checks. The CLI calls it before opening the database, so a typo is told at once.
 */
export function checkRootKeyPermissions(permissions: string[]): void {
  if (permissions.length === 0) throw new AdminError("give --permission P (repeatable) or --all");
  for (const p of permissions) checkGrantable(p);
}

/** Creates a root key in a workspace; returns its id and the secret (shown once). */
export async function createRootKey(
  deps: AdminDeps,
  workspaceId: string,
  permissions: string[],
  name: string | null,
): Promise<{ id: string; secret: string }> {
  checkRootKeyPermissions(permissions);
  return mutateAs(deps, cliActor(workspaceId), async (tx, change) => {
    if (!(await workspaceFindById(tx, workspaceId))) {
      throw new AdminError(`workspace ${workspaceId} does not exist`);
    }
    const created = await insertRootKey(
      tx,
      change,
      { workspaceId, permissions, name },
      deps.keyHashing,
    );
    if (!created) throw new AdminError("generated key collided; run the command again");
    return created;
  });
}

/** Lists the live workspaces. */
export function listWorkspaces(deps: AdminDeps): Promise<WorkspaceRow[]> {
  return workspaceList(deps.db);
}

/** Lists root keys (never their secrets). */
export function listRootKeys(deps: AdminDeps, workspaceId?: string): Promise<RootKeyRow[]> {
  return rootKeyList(deps.db, workspaceId);
}

/**
 * Revokes a root key; every node stops accepting it at once. The environment's ROOT_KEY
 * has no row to revoke: it stops when it leaves the environment.
 */
export async function revokeRootKey(deps: AdminDeps, id: string): Promise<void> {
  if (id === ENVIRONMENT_ROOT_KEY_ID) {
    throw new AdminError(
      `${id} is the environment's ROOT_KEY: remove or change ROOT_KEY and restart to stop it`,
    );
  }
  await mutateAs(deps, cliActor(""), async (tx, change) => {
    const revoked = await rootKeyRevoke(tx, id, change.now);
    if (!revoked) throw new AdminError(`no live root key ${id}`);
    change.audit({
      workspaceId: revoked.workspaceId,
      event: "rootKey.revoke",
      resourceType: "rootKey",
      resourceId: id,
      description: `Revoked root key ${id}.`,
    });
    change.invalidate({ kind: "rootKeys" });
  });
}
