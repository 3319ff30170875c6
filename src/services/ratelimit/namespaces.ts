import type { HandlerContext } from "@connectrpc/connect";
import type { NamespaceEntry } from "../../cache/caches.js";
import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import {
  namespaceFind,
  namespaceInsertIfAbsent,
  overridesOfNamespace,
} from "../../storage/queries/ratelimit-namespaces.js";
import { authorize } from "../auth.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";

/**
 * Loads a namespace (by id or name) with its overrides, through the cache. Through `load`, so
 * a read that started before an override changed is not stored after the change's
 * invalidation; under the key asked for only (a name may equal another namespace's id, and
 * the database prefers the id); an absence is not kept (creating a namespace invalidates
 * nothing), undefined.
 */
function lookup(
  deps: Deps,
  workspaceId: string,
  idOrName: string,
): Promise<NamespaceEntry | undefined> {
  return deps.caches.namespaces.load(
    `${workspaceId}:${idOrName}`,
    async () => {
      const namespace = await namespaceFind(deps.db, workspaceId, idOrName);
      if (!namespace) return undefined;
      return { namespace, overrides: await overridesOfNamespace(deps.db, namespace.id) };
    },
    (entry) => entry !== undefined,
  );
}

/** The namespace an override procedure names: 404 when it does not exist or was deleted. */
export async function existingNamespace(
  deps: Deps,
  workspaceId: string,
  idOrName: string,
): Promise<NamespaceEntry> {
  const entry = await lookup(deps, workspaceId, idOrName);
  if (!entry || entry.namespace.deletedAt !== null) throw errors.namespaceNotFound();
  return entry;
}

/**
 * The namespace a limit procedure names, created (named after the given string) when it
 * does not exist: creating needs `ratelimit.*.limit`, since it adds a namespace to the
 * workspace, not only a decision. A deleted namespace is 410.
 * Concurrent creators converge on one namespace. After creating, the namespace is read in
 * the creating transaction, not through the cache: a cache load that began before another
 * caller's creation committed would still answer "absent".
 */
export async function namespaceForLimit(
  deps: Deps,
  ctx: HandlerContext,
  workspaceId: string,
  idOrName: string,
): Promise<NamespaceEntry> {
  let entry = await lookup(deps, workspaceId, idOrName);
  if (!entry) {
    // Every namespace, the new one among them: `ratelimit.*.limit`.
    authorize(ctx, { namespaceId: "*" });
    entry = await createNamespace(deps, ctx, workspaceId, idOrName);
  }
  if (entry.namespace.deletedAt !== null) throw errors.namespaceGone();
  return entry;
}

/** Creates a namespace named `name` unless one exists; returns the one that does now. */
function createNamespace(
  deps: Deps,
  ctx: HandlerContext,
  workspaceId: string,
  name: string,
): Promise<NamespaceEntry> {
  return mutate(deps, ctx, async (tx, change) => {
    const id = newId("rlns");
    const row = { id, workspaceId, name, createdAt: change.now, deletedAt: null };
    if (await namespaceInsertIfAbsent(tx, row)) {
      change.audit({
        event: "ratelimitNamespace.create",
        resourceType: "ratelimitNamespace",
        resourceId: id,
        description: `Created rate-limit namespace ${name}.`,
      });
      change.invalidate({ kind: "namespace", workspaceId, id });
    }
    // The insert waited for a concurrent creator to commit, so this read sees its row.
    const namespace = await namespaceFind(tx, workspaceId, name);
    if (!namespace) throw errors.unexpected(new Error(`namespace ${name} missing after creation`));
    return { namespace, overrides: await overridesOfNamespace(tx, namespace.id) };
  });
}
