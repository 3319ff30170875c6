import { apiCacheKey } from "../../cache/caches.js";
import { errors } from "../../errors/service-error.js";
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
