import { apiCacheKey } from "../../cache/caches.js";
import { errors, type ServiceError } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import { type ApiRow, apiFindById } from "../../storage/queries/apis.js";
import type { Deps } from "../deps.js";

/** Loads a live API of the workspace through the cache; 404 when there is none. */
export async function findApi(deps: Deps, workspaceId: string, apiId: string): Promise<ApiRow> {
  const api = await deps.caches.apis.load(
    apiCacheKey(workspaceId, apiId),
    async () => (await apiFindById(deps.db, workspaceId, apiId)) ?? null,
  );
  if (!api) throw errors.apiNotFound();
  return api;
}

/**
 * Inside a transaction that adds keys to an API: checks again that the API is live and
 * share-locks it until commit, so that a concurrent deleteApi either waits for the keys or
 * has deleted the API first, which is a 404 (`gone`) here. No key is ever added to a
 * deleted API. Answers the API as it is then (its key format, read fresh).
 */
export async function lockLiveApi(
  tx: Queryable,
  workspaceId: string,
  apiId: string,
  gone: () => ServiceError = errors.apiNotFound,
): Promise<ApiRow> {
  const api = await apiFindById(tx, workspaceId, apiId, true);
  if (!api) throw gone();
  return api;
}
