import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type VerifyKeyRequest,
  VerifyKeyRequestSchema,
  VerifyKeyResponseDataSchema,
  type VerifyKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { IDEMPOTENCY_WINDOW_MS } from "../../domain/idempotency.js";
import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import type { AnalyticsEvent } from "../../storage/queries/events.js";
import { idempotencyRead } from "../../storage/queries/idempotency.js";
import { reservationInsert } from "../../storage/queries/reservations.js";
import type { Call } from "../call.js";
import type { Deps } from "../deps.js";
import {
  claimOrReplay,
  type IdempotentRequest,
  idempotentRequest,
  keepAnswer,
  replayed,
} from "../idempotency.js";
import { ClaimingSpends, ClaimLost } from "./claiming-spends.js";
import { TokensTaken } from "./tokens-taken.js";
import type { Reserving, VerifyDeps } from "./verify-key.js";

type Answer = MessageInitShape<typeof VerifyKeyResponseSchema>;

/**
 * A verification with an idempotency key: the first in the root key's workspace runs `run`
 * (steps 4 to 7 of verifyKey) and stores its answer in the transaction that charges it, so
 * the charge and the record commit together or not at all. A repeat answers the stored data
 * and charges nothing: no credits, no rate-limit tokens, no event; one asking something else
 * is 409.
 *
 * The key's record is read first, without a transaction: a stored answer is replayed at once.
 * With no record, the verification runs as one without a key, and its credit spend claims
 * the key and stores the answer in the grouped transaction of its key's (or pool's) spends
 * (`verifyFirst`): on a hot key, many such verifications cost one transaction, not one each
 * serialised on the balance's row lock. Only a record still in flight (its claimer has not
 * committed) or a claim lost to a racing call takes the transaction of its own that waits on
 * the claim (`verifyInTransaction`).
 *
 * A verification that reserves credits always takes that transaction of its own: its
 * reservation is stored with its charge and its record, and a repeat answers the same
 * reservationId and holds nothing more.
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
  const request = idempotentRequest(
    "keys.verifyKey",
    principal,
    VerifyKeyRequestSchema,
    req,
    idempotencyKey,
  );
  const expiredAt = deps.clock.now() - IDEMPOTENCY_WINDOW_MS;
  const prior = await idempotencyRead(deps.db, request.workspaceId, idempotencyKey, expiredAt);
  if (prior?.answer != null) {
    return { data: replayed(prior, request, VerifyKeyResponseDataSchema) };
  }
  if (prior === undefined && req.credits?.reserve === undefined) {
    const first = await verifyFirst(deps, request, run);
    if (first !== undefined) return first;
  }
  return verifyClaimed(deps, request, run);
}

/**
 * A verification whose key had no record: `run` as usual, its credit spend claiming the key
 * (see `ClaimingSpends`). An outcome that never reaches a spend (NOT_FOUND, RATE_LIMITED, a
 * key without credits, ...) claims the key and stores its answer in a short transaction
 * afterwards; if another call claimed it meanwhile, that call's answer is given. Undefined
 * when the spend's claim was lost: nothing was spent, the tokens went back, and the caller
 * answers what the winner answered. Events are kept until the record committed.
 */
async function verifyFirst(
  deps: Deps,
  request: IdempotentRequest,
  run: (d: VerifyDeps) => Promise<Answer>,
): Promise<Answer | undefined> {
  const held = new HeldBack(deps);
  const once = new ClaimingSpends(deps.credits, request, deps.clock);
  let answer: Answer;
  try {
    answer = await run(held.verifyDeps({ credits: deps.credits, once }));
    if (!once.reached) {
      const winner = await deps.db.transaction(async (tx) => {
        const prior = await claimOrReplay(
          tx,
          request,
          deps.clock.now(),
          VerifyKeyResponseDataSchema,
        );
        if (prior === undefined) {
          await keepAnswer(tx, request, VerifyKeyResponseDataSchema, answer.data ?? {});
        }
        return prior;
      });
      if (winner !== undefined) {
        await held.giveBack();
        return { data: winner };
      }
    }
  } catch (err) {
    await held.giveBack();
    if (err instanceof ClaimLost) return undefined;
    throw err;
  }
  held.release();
  return answer;
}

/**
 * The verification as one transaction that claims the key (waiting for a claimer in flight),
 * runs `run` with its spends inside it unless a committed answer is there, and stores the
 * answer.
 */
function verifyClaimed(
  deps: Deps,
  request: IdempotentRequest,
  run: (d: VerifyDeps) => Promise<Answer>,
): Promise<Answer> {
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
  const held = new HeldBack(deps);
  let answer: Answer;
  try {
    answer = await deps.db.transaction((tx) =>
      run(
        tx,
        held.verifyDeps({
          credits: deps.credits.within(tx),
          reservations: reservationsIn(tx, deps),
        }),
      ),
    );
  } catch (err) {
    await held.giveBack();
    throw err;
  }
  held.release();
  return answer;
}

/**
 * What a verification does beyond its answer, held back until its charge and record commit:
 * its events (recorded only then) and the rate-limit tokens it took (given back if they do
 * not commit, or if another call's answer is the one to give).
 */
class HeldBack {
  private readonly events: AnalyticsEvent[] = [];
  private readonly limiter: TokensTaken;

  constructor(private readonly deps: Deps) {
    this.limiter = new TokensTaken(deps.limiter);
  }

  /** What steps 4 to 7 use, with these held back and the spending of `spending`. */
  verifyDeps(spending: Pick<VerifyDeps, "credits" | "once" | "reservations">): VerifyDeps {
    const { clock, caches, metrics } = this.deps;
    const events = { record: (e: AnalyticsEvent) => void this.events.push(e) };
    return { clock, caches, metrics, limiter: this.limiter, events, ...spending };
  }

  /** The verification happened: its events are recorded. */
  release(): void {
    for (const e of this.events) this.deps.events.record(e);
  }

  /** It did not (or another call's answer stands): the tokens it took go back. */
  giveBack(): Promise<void> {
    return this.limiter.giveBackAll();
  }
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
