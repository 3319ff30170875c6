import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { IdentitySchema } from "../../../gen/latchkey/v2/identities_pb.js";
import { applyRefill } from "../../domain/credits.js";
import type { IdentityRow } from "../../storage/queries/identities.js";
import type { RatelimitRow } from "../../storage/queries/ratelimits.js";
import { toCreditsMessage } from "../keys/credits-input.js";
import { toRatelimitMessage } from "../ratelimit-settings.js";

/** Stored metadata: an empty object is stored as none. */
export function storedMeta(meta: JsonObject | undefined): JsonObject | null {
  return meta && Object.keys(meta).length > 0 ? meta : null;
}

/**
 * An identity as returned by reads: meta, ratelimits and credits omitted when empty, a
 * pending refill of the credits applied at `now` (as a verification would apply it).
 */
export function toIdentityMessage(
  row: IdentityRow,
  limits: readonly RatelimitRow[],
  now: number,
): MessageInitShape<typeof IdentitySchema> {
  const credits = toCreditsMessage(applyRefill(row, now));
  return {
    id: row.id,
    externalId: row.externalId,
    ...(row.meta && Object.keys(row.meta).length > 0 ? { meta: row.meta } : {}),
    ratelimits: limits.map(toRatelimitMessage),
    ...(credits ? { credits } : {}),
  };
}
