import type { MessageInitShape } from "@bufbuild/protobuf";
import type { FieldMask } from "@bufbuild/protobuf/wkt";
import {
  type Credits,
  type CreditsSchema,
  RefillInterval,
} from "../../../gen/latchkey/v2/common_pb.js";
import { type CreditState, type CreditsInput, creditViolations } from "../../domain/credits.js";
import { errors } from "../../errors/service-error.js";
import { updates } from "../update-mask.js";

/** Credits of a request in domain terms; unset credits mean unlimited. */
export function creditsInput(c: Credits | undefined): CreditsInput {
  if (!c) return { remaining: null, refill: null };
  return {
    remaining: c.remaining === undefined ? null : Number(c.remaining),
    refill: c.refill
      ? {
          interval:
            c.refill.interval === RefillInterval.DAILY
              ? "daily"
              : c.refill.interval === RefillInterval.MONTHLY
                ? "monthly"
                : undefined,
          amount: Number(c.refill.amount),
          refillDay: c.refill.refillDay ?? null,
        }
      : null,
  };
}

/** Throws 400 naming the fields when credits break the refill rules. */
export function checkCredits(c: Credits | undefined, pointer: string): void {
  const violations = creditViolations(creditsInput(c), pointer);
  if (violations.length > 0) throw errors.invalidInput(violations);
}

/**
 * The stored state of new credits, set at `now` (the next refill is at the next boundary).
 * `keptRemaining`, when given, is the balance to keep in place of the request's.
 */
export function creditState(
  c: Credits | undefined,
  now: number,
  keptRemaining?: number | null,
): CreditState {
  const given = creditsInput(c);
  const input = keptRemaining === undefined ? given : { ...given, remaining: keptRemaining };
  if (input.remaining === null)
    return { remaining: null, refillAmount: null, refillDay: null, lastRefillAt: null };
  return {
    remaining: input.remaining,
    refillAmount: input.refill?.amount ?? null,
    refillDay: input.refill?.interval === "monthly" ? input.refill.refillDay : null,
    lastRefillAt: input.refill ? now : null,
  };
}

/** Credits as returned by reads; undefined for an unlimited key. */
export function toCreditsMessage(
  s: CreditState,
): MessageInitShape<typeof CreditsSchema> | undefined {
  if (s.remaining === null) return undefined;
  return {
    remaining: BigInt(s.remaining),
    ...(s.refillAmount !== null
      ? {
          refill: {
            interval: s.refillDay === null ? RefillInterval.DAILY : RefillInterval.MONTHLY,
            amount: BigInt(s.refillAmount),
            ...(s.refillDay !== null ? { refillDay: s.refillDay } : {}),
          },
        }
      : {}),
  };
}

/**
 * True when an update's credits object leaves `remaining` out (not null) and sets no refill:
 * it drops the refill and keeps the balance. Only `credits: null` or `remaining: null` makes
 * a balance unlimited, so a client that sends `{"refill": null}` to drop a refill (the
 * official SDK does) never turns metered usage into free usage. Shared by keys and identities.
 */
export function keepsBalance(c: Credits | undefined, mask: FieldMask | undefined): boolean {
  if (!c || c.remaining !== undefined || c.refill !== undefined) return false;
  return !updates(mask, "credits.remaining", false);
}
