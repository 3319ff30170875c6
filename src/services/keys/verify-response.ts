import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  VerifyKeyCode,
  type VerifyKeyResponseDataSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import type { PlannedLimit } from "../../domain/ratelimit-plan.js";
import { visibleIdentityLimits } from "../../domain/ratelimit-plan.js";
import type { VerifyCode } from "../../domain/verification.js";
import type { LimitOutcome } from "../../ratelimit/limiter.js";
import type { KeyRecordRow } from "../../storage/queries/key-records.js";
import { identityOf } from "./record.js";

type Data = MessageInitShape<typeof VerifyKeyResponseDataSchema>;

const CODES: Record<VerifyCode, VerifyKeyCode> = {
  VALID: VerifyKeyCode.VALID,
  NOT_FOUND: VerifyKeyCode.NOT_FOUND,
  FORBIDDEN: VerifyKeyCode.FORBIDDEN,
  INSUFFICIENT_PERMISSIONS: VerifyKeyCode.INSUFFICIENT_PERMISSIONS,
  USAGE_EXCEEDED: VerifyKeyCode.USAGE_EXCEEDED,
  RATE_LIMITED: VerifyKeyCode.RATE_LIMITED,
  DISABLED: VerifyKeyCode.DISABLED,
  EXPIRED: VerifyKeyCode.EXPIRED,
};

/** The answer for a key that is not there: only `valid` and `code`. */
export function notFoundData(): Data {
  return { valid: false, code: VerifyKeyCode.NOT_FOUND };
}

/** A rate limit as a verification reports it. */
export function limitResult(p: PlannedLimit, o: LimitOutcome) {
  return {
    id: p.id,
    name: p.name,
    limit: BigInt(p.limit),
    duration: BigInt(p.durationMs),
    remaining: BigInt(o.remaining),
    reset: BigInt(o.reset),
    exceeded: !o.passed,
    autoApply: p.autoApply,
  };
}

/**
 * The `identity` blocks of key records, by record: they depend on the record alone (a change
 * replaces the record), and create() copies them into each answer without changing them.
 */
const identities = new WeakMap<KeyRecordRow, Data["identity"] | null>();

function identityBlock(r: KeyRecordRow): Data["identity"] | null {
  let block = identities.get(r);
  if (block === undefined) {
    block = identityOf(r, visibleIdentityLimits(r.identityRatelimits, r.keyRatelimits)) ?? null;
    identities.set(r, block);
  }
  return block;
}

/** Lets `to`, a copy of `from` with another balance, use the identity block made for `from`. */
export function carryIdentityBlock(from: KeyRecordRow, to: KeyRecordRow): void {
  const block = identities.get(from);
  if (block !== undefined) identities.set(to, block);
}

/**
 * The answer for a key that exists: the outcome and the key's fields (empty ones omitted),
 * `credits` the balance to report (undefined for an unlimited key), `limits` the rate
 * limits evaluated, if that step ran, `pool` the identity's pool to report in the identity
 * block's `credits` (null when it has none).
 */
export function keyData(
  r: KeyRecordRow,
  code: VerifyCode,
  credits: number | null,
  limits: ReturnType<typeof limitResult>[],
  pool: number | null = null,
): Data {
  const data: Data = {
    valid: code === "VALID",
    code: CODES[code],
    keyId: r.id,
    enabled: r.enabled,
    permissions: r.permissions,
    roles: r.roles,
    ratelimits: limits,
  };
  if (r.name !== null) data.name = r.name;
  if (r.meta && hasKeys(r.meta)) data.meta = r.meta;
  if (r.expiresAt !== null) data.expires = BigInt(r.expiresAt);
  if (credits !== null) data.credits = BigInt(credits);
  const identity = identityBlock(r);
  // The block is shared by every answer of this record: the pool's balance, which differs
  // from answer to answer, goes into a copy.
  if (identity !== null)
    data.identity = pool === null ? identity : { ...identity, credits: BigInt(pool) };
  return data;
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}
