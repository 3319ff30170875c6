import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type VerifyKeyRequest,
  VerifyKeyRequestSchema,
  VerifyKeyResponseDataSchema,
  type VerifyKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { idempotencyHash } from "../../domain/idempotency.js";
import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import type { LimitCheck, LimitDecision, Limiter } from "../../ratelimit/limiter.js";
import type { Queryable } from "../../storage/db.js";
import type { AnalyticsEvent } from "../../storage/queries/events.js";
import { reservationInsert } from "../../storage/queries/reservations.js";
import type { Call } from "../call.js";
import type { Deps } from "../deps.js";
import { claimOrReplay, type IdempotentRequest, keepAnswer } from "../idempotency.js";
import type { Reserving, VerifyDeps } from "./verify-key.js";

type Answer = MessageInitShape<typeof VerifyKeyResponseSchema>;

/**
 * A verification with an idempotency key: the first in the root key's workspace runs `run`
 * (steps 4 to 7 of verifyKey) inside one transaction that claims the key, spends the credits
 * (and stores a reservation) and stores the answer, so the charge and the record commit
 * together or not at all. A repeat (or a racing first call, on any node: it waits on the
 * claim) answers the stored data, the same reservationId included, and charges nothing: no
 * credits, no rate-limit tokens, no event, no second reservation. Each such verification is
 * its own transaction, not one of the grouped spends: the record must commit with its charge.
 */
export async function verifyOnce(
  deps: Deps,
  call: Call,
  req: VerifyKeyRequest,
  idempotencyKey: string,
  run: (d: VerifyDeps) => Promise<Answer>,
): Promise<Answer> {
  const principal = call.principal;
  if (!principal) {
    throw errors.badField(
      "/idempotencyKey",
      "needs a root key: idempotency keys are kept per workspace, the root key's",
    );
  }
  const request: IdempotentRequest = {
    workspaceId: principal.workspaceId,
    key: idempotencyKey,
    requestHash: idempotencyHash(
      "keys.verifyKey",
      principal.rootKeyId,
      VerifyKeyRequestSchema,
      req,
    ),
  };
  return verifyInTransaction(deps, async (tx, d) => {
    const prior = await claimOrReplay(tx, request, deps.clock.now(), VerifyKeyResponseDataSchema);
    if (prior !== undefined) return { data: prior };
    const first = await run(d);
    await keepAnswer(tx, request, VerifyKeyResponseDataSchema, first.data ?? {});
    return first;
  });
}

/**
 * Runs steps 4 to 7 of a verification inside one transaction: its credits are spent and its
 * reservation (with `credits.reserve`) stored in it, so they commit together or not at all.
 * If the transaction fails, the tokens the verification took go back, and its event, kept
 * until the commit, is dropped: the verification did not happen.
 */
export async function verifyInTransaction(
  deps: Deps,
  run: (tx: Queryable, d: VerifyDeps) => Promise<Answer>,
): Promise<Answer> {
  const events: AnalyticsEvent[] = [];
  const limiter = new TokensTaken(deps.limiter);
  let answer: Answer;
  try {
    answer = await deps.db.transaction((tx) =>
      run(tx, {
        clock: deps.clock,
        caches: deps.caches,
        metrics: deps.metrics,
        limiter,
        credits: deps.credits.within(tx),
        events: { record: (e) => events.push(e) },
        reservations: reservationsIn(tx, deps),
      }),
    );
  } catch (err) {
    await limiter.giveBackAll();
    throw err;
  }
  for (const e of events) deps.events.record(e);
  return answer;
}

/** Reservations stored in `tx`, held for RESERVATION_TTL_S from now. */
function reservationsIn(tx: Queryable, deps: Deps): Reserving {
  return {
    async hold(r) {
      const id = newId("res");
      const now = deps.clock.now();
      const expiresAt = now + deps.config.reservationTtlS * 1000;
      await reservationInsert(tx, { ...r, id, createdAt: now, expiresAt });
      return id;
    },
  };
}

/**
 * A limiter that remembers the tokens its successful checks took and were not given back,
 * so that a verification whose transaction fails after its rate limits can return them.
 */
class TokensTaken implements Limiter {
  private taken: { checks: readonly LimitCheck[]; now: number }[] = [];

  constructor(private readonly inner: Limiter) {}

  async check(checks: readonly LimitCheck[], now: number): Promise<LimitDecision> {
    const decision = await this.inner.check(checks, now);
    // A failed decision takes nothing; a made-up one (backend unreachable) took nothing.
    if (decision.success && !decision.degraded) this.taken.push({ checks, now });
    return decision;
  }

  refund(checks: readonly LimitCheck[], now: number): Promise<void> {
    this.taken = this.taken.filter((t) => t.checks !== checks);
    return this.inner.refund(checks, now);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Gives back whatever is still taken (once). */
  async giveBackAll(): Promise<void> {
    const taken = this.taken;
    this.taken = [];
    for (const t of taken) await this.inner.refund(t.checks, t.now);
  }
}
