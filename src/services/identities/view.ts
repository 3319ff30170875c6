import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { IdentitySchema } from "../../../gen/latchkey/v2/identities_pb.js";
import type { IdentityRow } from "../../storage/queries/identities.js";
import type { RatelimitRow } from "../../storage/queries/ratelimits.js";
import { toRatelimitMessage } from "../ratelimit-settings.js";

/** Stored metadata: an empty object is stored as none. */
export function storedMeta(meta: JsonObject | undefined): JsonObject | null {
  return meta && Object.keys(meta).length > 0 ? meta : null;
}

/** An identity as returned by reads: meta and ratelimits omitted when empty. */
export function toIdentityMessage(
  row: IdentityRow,
  limits: readonly RatelimitRow[],
): MessageInitShape<typeof IdentitySchema> {
  return {
    id: row.id,
    externalId: row.externalId,
    ...(row.meta && Object.keys(row.meta).length > 0 ? { meta: row.meta } : {}),
    ratelimits: limits.map(toRatelimitMessage),
  };
}
