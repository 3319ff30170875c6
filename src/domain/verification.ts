import { type Query, satisfies } from "./permission-query.js";

/** The outcomes of a verification, as the API names them. */
export type VerifyCode =
  | "VALID"
  | "NOT_FOUND"
  | "FORBIDDEN"
  | "INSUFFICIENT_PERMISSIONS"
  | "USAGE_EXCEEDED"
  | "RATE_LIMITED"
  | "DISABLED"
  | "EXPIRED";

/** What the status checks need to know about a key. */
export interface KeyStatus {
  enabled: boolean;
  expiresAt: number | null;
  permissions: readonly string[];
}

/**
 * The checks that need no I/O, in this order, first failure wins: DISABLED (whatever
 * else is true), EXPIRED (strictly after `expires`, server time), FORBIDDEN (the client is
 * outside the key's network rule, `fromAllowedNetwork` false), then the permissions query.
 * Undefined when all pass (rate limits and credits come next, so a refusal spends nothing).
 */
export function statusVerdict(
  key: KeyStatus,
  query: Query | undefined,
  now: number,
  fromAllowedNetwork = true,
): VerifyCode | undefined {
  if (!key.enabled) return "DISABLED";
  if (key.expiresAt !== null && now > key.expiresAt) return "EXPIRED";
  if (!fromAllowedNetwork) return "FORBIDDEN";
  if (query && !satisfies(query, key.permissions)) return "INSUFFICIENT_PERMISSIONS";
  return undefined;
}
