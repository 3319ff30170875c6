import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import { type EndpointRow, endpointFind } from "../../storage/queries/webhook-endpoints.js";

/**
 * Loads the workspace's endpoint with this id; 404 when there is none (another workspace's
 * looks the same). `lock`: held for the rest of the transaction, so changes take turns.
 */
export async function findEndpoint(
  q: Queryable,
  workspaceId: string,
  id: string,
  lock = false,
): Promise<EndpointRow> {
  const row = await endpointFind(q, workspaceId, id, lock);
  if (!row) throw errors.webhookEndpointNotFound();
  return row;
}
