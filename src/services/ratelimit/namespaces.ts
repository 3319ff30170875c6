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

/** Loads a namespace (by id or name) with its overrides, through the cache; undefined when none. */
async function lookup(
  deps: Deps,
  workspaceId: string,
  idOrName: string,
): Promise<NamespaceEntry | undefined> {
  const key = `${workspaceId}:${idOrName}`;
  const hit = deps.caches.namespaces.get(key);
  if (hit) return hit;
  const namespace = await namespaceFind(deps.db, workspaceId, idOrName);
  if (!namespace) return undefined;
  const entry = { namespace, overrides: await overridesOfNamespace(deps.db, namespace.id) };
  deps.caches.namespaces.set(`${workspaceId}:${namespace.id}`, entry);
  deps.caches.namespaces.set(`${workspaceId}:${namespace.name}`, entry);
  return entry;
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
 * does not exist: creating needs `ratelimit.*.limit` (DESIGN.md). A deleted namespace is 410.
 * Concurrent creators converge on one namespace.
 */
export async function namespaceForLimit(
  deps: Deps,
  ctx: HandlerContext,
  workspaceId: string,
  idOrName: string,
): Promise<NamespaceEntry> {
  let entry = await lookup(deps, workspaceId, idOrName);
  if (!entry) {
    authorize(ctx, { namespaceId: "*" }, ["createNamespace"]);
    await mutate(deps, ctx, async (tx, change) => {
      const id = newId("rlns");
      if (
        await namespaceInsertIfAbsent(tx, {
          id,
          workspaceId,
          name: idOrName,
          createdAt: change.now,
          deletedAt: null,
        })
      ) {
        change.audit({
          event: "ratelimitNamespace.create",
          resourceType: "ratelimitNamespace",
          resourceId: id,
          description: `Created rate-limit namespace ${idOrName}.`,
        });
        change.invalidate({ kind: "namespace", workspaceId, id });
      }
    });
    entry = await lookup(deps, workspaceId, idOrName);
    if (!entry) throw new Error(`namespace ${idOrName} missing after creation`);
  }
  if (entry.namespace.deletedAt !== null) throw errors.namespaceGone();
  return entry;
}
