import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CreditsSchema } from "../../../gen/latchkey/v2/common_pb.js";
import type { KeySchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { applyRefill } from "../../domain/credits.js";
import {
  identityCredits,
  type KeyRecordRow,
  type RecordRatelimit,
} from "../../storage/queries/key-records.js";
import { toCreditsMessage } from "./credits-input.js";

/** A configured rate limit as returned by reads. */
export function recordRatelimit(r: RecordRatelimit) {
  return {
    id: r.id,
    name: r.name,
    limit: BigInt(r.limit),
    duration: BigInt(r.durationMs),
    autoApply: r.autoApply,
  };
}

/**
 * The `identity` block of a key record with these of its rate limits, or undefined for a key
 * without a (live) identity. Its credit pool is for the caller to add, in the shape it answers.
 */
export function identityOf(r: KeyRecordRow, ratelimits: readonly RecordRatelimit[]) {
  if (r.identityId === null) return undefined;
  return {
    id: r.identityId,
    externalId: r.externalId ?? "",
    ...(r.identityMeta && Object.keys(r.identityMeta).length > 0 ? { meta: r.identityMeta } : {}),
    ratelimits: ratelimits.map(recordRatelimit),
  };
}

/** The key record: empty fields omitted, a pending refill applied. */
export function toKeyMessage(r: KeyRecordRow, now: number): MessageInitShape<typeof KeySchema> {
  const credits = toCreditsMessage(applyRefill(r, now));
  return {
    keyId: r.id,
    start: r.start,
    enabled: r.enabled,
    createdAt: BigInt(r.createdAt),
    ...(r.name !== null ? { name: r.name } : {}),
    ...(r.meta && Object.keys(r.meta).length > 0 ? { meta: r.meta } : {}),
    ...(r.updatedAt !== null ? { updatedAt: BigInt(r.updatedAt) } : {}),
    ...(r.lastUsedAt !== null ? { lastUsedAt: BigInt(r.lastUsedAt) } : {}),
    ...(r.expiresAt !== null ? { expires: BigInt(r.expiresAt) } : {}),
    ...(credits ? { credits } : {}),
    permissions: r.permissions,
    roles: r.roles,
    ...identityBlock(r, toCreditsMessage(applyRefill(identityCredits(r), now))),
    ratelimits: r.keyRatelimits.map(recordRatelimit),
    allowedCidrs: r.allowedCidrs ?? [],
  };
}

/** A key record's identity with its pool as the Credits object reads answer (if any). */
function identityBlock(
  r: KeyRecordRow,
  credits: MessageInitShape<typeof CreditsSchema> | undefined,
) {
  const identity = identityOf(r, r.identityRatelimits);
  if (identity === undefined) return {};
  return { identity: credits ? { ...identity, credits } : identity };
}
