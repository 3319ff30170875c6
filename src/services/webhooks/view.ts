import type { MessageInitShape } from "@bufbuild/protobuf";
import type { WebhookEndpointSchema } from "../../../gen/latchkey/v2/webhooks_pb.js";
import { endpointUrlProblem } from "../../domain/webhooks/addresses.js";
import { normaliseEventTypes } from "../../domain/webhooks/events.js";
import { errors } from "../../errors/service-error.js";
import type { EndpointRow } from "../../storage/queries/webhook-endpoints.js";

/** Endpoints one workspace may have at most. */
export const MAX_ENDPOINTS_PER_WORKSPACE = 20;

/** An endpoint as reads answer it: never its secrets. */
export function toEndpointMessage(
  row: EndpointRow,
  now: number,
): MessageInitShape<typeof WebhookEndpointSchema> {
  const previousLive =
    row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now
      ? BigInt(row.previousSecretExpiresAt)
      : undefined;
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    description: row.description ?? undefined,
    enabled: row.enabled,
    creditsLowThreshold:
      row.creditsLowThreshold === null ? undefined : BigInt(row.creditsLowThreshold),
    disabledReason: row.disabledReason ?? undefined,
    createdAt: BigInt(row.createdAt),
    updatedAt: row.updatedAt === null ? undefined : BigInt(row.updatedAt),
    failingSince: row.failingSince === null ? undefined : BigInt(row.failingSince),
    previousSecretExpiresAt: previousLive,
  };
}

/** The endpoint's URL, checked beyond its field rules (400 naming `/url`). */
export function checkedUrl(url: string, allowPrivate: boolean): string {
  const problem = endpointUrlProblem(url, allowPrivate);
  if (problem) throw errors.badField("/url", problem);
  return url;
}

/**
 * The subscription an endpoint ends with: each type once, and a threshold whenever it
 * subscribes to credits.low (400 naming `/creditsLowThreshold` otherwise).
 */
export function checkedSubscription(
  eventTypes: readonly string[],
  threshold: number | null,
): string[] {
  const types = normaliseEventTypes(eventTypes);
  if (types.includes("credits.low") && threshold === null)
    throw errors.badField("/creditsLowThreshold", "is required to subscribe to credits.low");
  return types;
}
