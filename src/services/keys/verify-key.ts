import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  VerifyKeyRequest,
  VerifyKeyResponseDataSchema,
  VerifyKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import type { EventBuffer } from "../../analytics/event-buffer.js";
import { applyRefill } from "../../domain/credits.js";
import { hashKey } from "../../domain/key-material.js";
import { parseQuery, type Query, QuerySyntaxError } from "../../domain/permission-query.js";
import { type PlannedLimit, planLimits, type RequestedLimit } from "../../domain/ratelimit-plan.js";
import { rootPermissionsAllow, rootPermissionsMayAllow } from "../../domain/root-permissions.js";
import { statusVerdict, type VerifyCode } from "../../domain/verification.js";
import { errors } from "../../errors/service-error.js";
import { counterName, type LimitCheck, type LimitDecision } from "../../ratelimit/limiter.js";
import type { CreditSpending, PooledResult, SpendResult } from "../../storage/credit-spender.js";
import { identityCredits, type KeyRecordRow } from "../../storage/queries/key-records.js";
import type { NewReservation } from "../../storage/queries/reservations.js";
import { type Call, callOf, type Principal } from "../call.js";
import type { Deps } from "../deps.js";
import { keepBalance } from "./cached-balance.js";
import type { ClaimingSpending } from "./claiming-spends.js";
import { networkAllows } from "./network-rule.js";
import { recordEntry, verificationRecord } from "./verification-record.js";
import { verifyInTransaction, verifyOnce } from "./verify-once.js";
import { carryIdentityBlock, keyData, limitResult, notFoundData } from "./verify-response.js";
import { verifyScope } from "./verify-scope.js";

type Answer = MessageInitShape<typeof VerifyKeyResponseSchema>;
type AnswerData = MessageInitShape<typeof VerifyKeyResponseDataSchema>;
type LimitResult = ReturnType<typeof limitResult>;

/** The decision when no rate limit applies: nothing taken, nothing to give back. */
const NO_LIMITS: LimitDecision = Object.freeze({ success: true, outcomes: [] });

/**
 * Verifies a key: a fixed sequence of checks, the first failure wins (not found, disabled,
 * expired, network rule, permissions, rate limits, credits). The key is looked for in one tenant only (see
 * `verifyScope`). Outcomes are answers with HTTP 200; only a bad request (400), a bad root key
 * or no tenant named where one must be (401/403), an unknown requested rate limit (412) and an
 * unreachable database (503) are errors. A refused verification spends neither tokens nor credits.
 * A key whose identity has a credit pool spends from the pool and, when it has credits of its
 * own, from those too: from both or neither.
 */
export async function verifyKey(
  deps: Deps,
  req: VerifyKeyRequest,
  ctx: HandlerContext,
): Promise<Answer> {
  const call = callOf(ctx.values);
  const principal = call.principal;
  // 1. The tenant the key is looked for in; 401 when the call names none and must.
  const scope = verifyScope(deps, principal, req.apiId);
  // 2. The request, the permissions query included: 400 whatever the key's state.
  const query = req.permissions === undefined ? undefined : parseOrThrow(req.permissions);
  // 3. A root key, if given, must be able to verify keys of some API.
  if (principal && !rootPermissionsMayAllow(principal.permissions, "api", "verify_key")) {
    throw errors.insufficientPermissions("api.*.verify_key");
  }
  // 4. The key, in that scope and, with a root key, in its workspace and an API it may
  // verify, else NOT_FOUND. A cached record answers without waiting.
  const plain = hashKey(req.key);
  const entry = recordEntry(scope, plain);
  const cached = deps.caches.keys.get(entry);
  const record =
    cached !== undefined ? cached : await verificationRecord(deps, scope, req.key, plain, entry);
  // With an idempotency key the rest runs once per key: its charge commits with its record.
  if (req.idempotencyKey !== undefined) {
    const run = (d: VerifyDeps) => decide(d, call, req, query, record, entry);
    return verifyOnce(deps, call, req, req.idempotencyKey, run);
  }
  // A reservation is stored in the transaction that charges it, never one without the other.
  if (req.credits?.reserve !== undefined) {
    return verifyInTransaction(deps, (_tx, d) => decide(d, call, req, query, record, entry));
  }
  return decide(deps, call, req, query, record, entry);
}

/**
 * What steps 4 to 7 use: the server's own (`Deps`), or, for a verification with an
 * idempotency key, credits spent where the key is claimed (`once`, or the claiming
 * transaction), events kept until the record commits and a limiter that knows the tokens to
 * give back if it fails.
 */
export type VerifyDeps = Pick<
  Deps,
  "clock" | "caches" | "metrics" | "limiter" | "ratelimitNotices"
> & {
  credits: CreditSpending;
  events: Pick<EventBuffer, "record">;
  /** Stores reservations, in the transaction the credits are spent in (none outside one). */
  reservations?: Reserving;
  /**
   * With an idempotency key not claimed yet: the spend claims it and stores the answer in
   * its grouped transaction (see verify-once), instead of `credits`. Never with a
   * reservation, which is stored in a transaction of its own.
   */
  once?: ClaimingSpending;
};

/** Stores a reservation of credits a verification has just charged; answers its id. */
export interface Reserving {
  hold(r: Omit<NewReservation, "id" | "createdAt" | "expiresAt">): Promise<string>;
}

/** Steps 4 (the verdict on the key found) to 7, and the answer. */
async function decide(
  deps: VerifyDeps,
  call: Call,
  req: VerifyKeyRequest,
  query: Query | undefined,
  record: KeyRecordRow | null,
  entry: string,
): Promise<Answer> {
  const principal = call.principal;
  if (!record || !visibleTo(principal, record)) {
    return answer({ deps, call, req, record: null, code: "NOT_FOUND" });
  }
  // 5. DISABLED, EXPIRED, the network rule (FORBIDDEN), then the permissions query.
  const now = deps.clock.now();
  const balance = applyRefill(record, now).remaining;
  // The pool's balance from the record is only reported: a spend is decided by the database.
  const pool =
    record.identityRemaining === null ? null : applyRefill(identityCredits(record), now).remaining;
  const status = statusVerdict(record, query, now, networkAllows(record, req.clientIp));
  if (status) return answer({ deps, call, req, record, code: status, balance, pool, limits: [] });
  // 6. Rate limits: take the tokens of every applicable limit, or none (all-or-nothing).
  const plan = limitPlan(record, req);
  if (plan.unknown !== undefined)
    throw errors.preconditionFailed(unknownLimit(plan.unknown, record));
  const { planned, checks } = plan;
  const decision = checks.length > 0 ? await deps.limiter.check(checks, now) : NO_LIMITS;
  const limits = planned.map((p, i) =>
    limitResult(p, decision.outcomes[i] as (typeof decision.outcomes)[number]),
  );
  if (!decision.success) {
    announceExceeded(deps, record, planned, decision, now);
    return answer({ deps, call, req, record, code: "RATE_LIMITED", balance, pool, limits });
  }
  // 7. Credits: one conditional decrement, committed before we answer; refused → tokens back.
  // On gRPC and Connect a `credits` without `cost` reads as cost 0 (proto3; see docs/keys.md).
  // A reservation is charged like a cost of its amount, and remembered for the settlement.
  const reserve = req.credits?.reserve;
  const cost = reserve !== undefined ? Number(reserve) : req.credits ? Number(req.credits.cost) : 1;
  // A record showing no pool and no key credits was invalidated by any change that set one.
  if ((balance === null && pool === null) || cost === 0) {
    // An unlimited key still gets a reservation (holding nothing), so callers settle alike.
    const held = await hold(deps, req, record, cost, { keyCharged: false, identityId: null });
    return answer({ deps, call, req, record, code: "VALID", balance, pool, limits, ...held });
  }
  const spend = { deps, call, req, record, entry, cost, decision, checks, limits, now };
  return pool === null ? spendCredits(spend) : spendFromPool(spend);
}

/** Hands the limits that refused a verification to the webhook notices (never awaited). */
function announceExceeded(
  deps: VerifyDeps,
  record: KeyRecordRow,
  planned: readonly PlannedLimit[],
  decision: LimitDecision,
  now: number,
): void {
  if (!deps.ratelimitNotices || decision.degraded) return;
  const exceeded = [];
  for (const [i, p] of planned.entries()) {
    const o = decision.outcomes[i];
    if (o && !o.passed)
      exceeded.push({ name: p.name, limit: p.limit, durationMs: p.durationMs, reset: o.reset });
  }
  deps.ratelimitNotices.exceeded(
    {
      workspaceId: record.workspaceId,
      keyId: record.id,
      apiId: record.apiId,
      identityId: record.identityId,
    },
    exceeded,
    now,
  );
}

/** Whether a caller (a root key, or none) may learn that this key exists. */
function visibleTo(principal: Principal | undefined, record: KeyRecordRow): boolean {
  return (
    !principal ||
    (record.workspaceId === principal.workspaceId &&
      rootPermissionsAllow(principal.permissions, `api.${record.apiId}.verify_key`))
  );
}

/** A verification that passed every check before its credits, and what it took for them. */
interface Spend {
  deps: VerifyDeps;
  call: Call;
  req: VerifyKeyRequest;
  record: KeyRecordRow;
  /** The cache entry the record was read from. */
  entry: string;
  cost: number;
  decision: LimitDecision;
  checks: readonly LimitCheck[];
  limits: LimitResult[];
  now: number;
}

/** Step 7: spends the credits and answers; a refused or failed spend gives the tokens back. */
async function spendCredits(v: Spend): Promise<Answer> {
  const { deps, record } = v;
  const spent: SpendResult = await givingBackOnFailure(v, () =>
    deps.once === undefined
      ? deps.credits.spend(record.id, v.cost, record.creditsKeyId)
      : deps.once.spend(record.id, v.cost, record.creditsKeyId, (r) =>
          outcomeData(creditsSettled(v, r).outcome),
        ),
  );
  const settled = creditsSettled(v, spent);
  if (v.req.credits?.reserve === undefined) return settle(v, settled);
  const charged = { keyCharged: spent.status === "spent", identityId: null };
  return settle(v, await held(v, settled, charged));
}

/**
 * A spend's outcome, decided from its result alone (so that a claimed spend can store the
 * answer before its commit), and what then remains to do: the balances to show in the cache,
 * and whether the tokens go back (a refused spend).
 */
interface Settled {
  outcome: Outcome;
  keep?: { key: number | null; pool: number | null };
  refund?: true;
}

function creditsSettled(v: Spend, spent: SpendResult): Settled {
  switch (spent.status) {
    case "spent":
      return {
        keep: { key: spent.remaining, pool: null },
        outcome: validOutcome(v, { balance: spent.remaining }, v.cost),
      };
    case "unlimited":
      return { outcome: validOutcome(v, { balance: null }) };
    case "insufficient":
      return {
        ...refusedSpend(v, { balance: spent.remaining }),
        keep: { key: spent.remaining, pool: null },
      };
    case "gone":
      return refusedSpend(v, "gone");
  }
}

/** The VALID outcome of a spend: the balances it shows, and the credits it took if any. */
function validOutcome(
  v: Spend,
  shown: { balance: number | null; pool?: number | null },
  spentCredits?: number,
): Outcome {
  const { deps, call, req, record, limits } = v;
  const spent = spentCredits === undefined ? {} : { spentCredits };
  return { deps, call, req, record, code: "VALID", ...shown, limits, ...spent };
}

/** Shows the balances a spend read in the cache, gives back tokens if refused, and answers. */
async function settle(v: Spend, s: Settled): Promise<Answer> {
  const { deps, decision, checks, now } = v;
  if (s.keep) keepBalance(deps, v.entry, v.record, s.keep, now, carryDerived);
  if (s.refund) await giveBack(deps, decision, checks, now);
  return answer(s.outcome);
}

/**
 * A spend refused (a balance short: USAGE_EXCEEDED) or whose key went meanwhile (NOT_FOUND):
 * the tokens go back, and the answer reports the limits as they are then.
 */
function refusedSpend(
  v: Spend,
  shown: { balance: number | null; pool?: number | null } | "gone",
): Settled {
  const { deps, call, req, record, decision, checks, limits } = v;
  if (shown === "gone") {
    return { refund: true, outcome: { deps, call, req, record: null, code: "NOT_FOUND" } };
  }
  const back = givenBack(decision, checks, limits);
  return {
    refund: true,
    outcome: { deps, call, req, record, code: "USAGE_EXCEEDED", ...shown, limits: back },
  };
}

/**
 * Step 7 for a key whose identity has a credit pool: spends from the pool and the key's own
 * credits (if any) together, and answers with both balances; a refused or failed spend
 * gives the tokens back. The cache shows the balances the spend read, as for a key's own.
 */
async function spendFromPool(v: Spend): Promise<Answer> {
  const { deps, record } = v;
  const identityId = record.identityId as string;
  const spent: PooledResult = await givingBackOnFailure(v, () =>
    deps.once === undefined
      ? deps.credits.spendPooled(identityId, record.id, v.cost)
      : deps.once.spendPooled(identityId, record.id, v.cost, (r) =>
          outcomeData(poolSettled(v, r).outcome),
        ),
  );
  const settled = poolSettled(v, spent);
  if (v.req.credits?.reserve === undefined) return settle(v, settled);
  const charged =
    spent.status === "gone"
      ? { keyCharged: false, identityId: null }
      : {
          keyCharged: spent.keyRemaining !== null,
          identityId: spent.poolRemaining !== null ? v.record.identityId : null,
        };
  return settle(v, await held(v, settled, charged));
}

/**
 * A VALID outcome of a verification with `credits.reserve`, with the reservation of what it
 * charged (from the balances `charged` names) stored and its id in the answer. Only for a
 * reserving verification: the others go on without the extra step.
 */
async function held(
  v: Spend,
  s: Settled,
  charged: Pick<NewReservation, "keyCharged" | "identityId">,
): Promise<Settled> {
  if (s.outcome.code !== "VALID") return s;
  const id = await hold(v.deps, v.req, v.record, v.cost, charged);
  return { ...s, outcome: { ...s.outcome, ...id } };
}

function poolSettled(v: Spend, spent: PooledResult): Settled {
  if (spent.status === "gone") return refusedSpend(v, "gone");
  const keep = { key: spent.keyRemaining, pool: spent.poolRemaining };
  const shown = { balance: spent.keyRemaining, pool: spent.poolRemaining };
  if (spent.status !== "spent") return { ...refusedSpend(v, shown), keep };
  // Both balances may have become unlimited since the record was read: nothing was spent.
  const charged = spent.keyRemaining !== null || spent.poolRemaining !== null;
  return { keep, outcome: validOutcome(v, shown, charged ? v.cost : undefined) };
}

/**
 * With `credits.reserve`, stores the reservation of the `amount` just charged from the
 * balances `charged` names (none for an unlimited key), and answers its id for the answer.
 */
async function hold(
  deps: VerifyDeps,
  req: VerifyKeyRequest,
  record: KeyRecordRow,
  amount: number,
  charged: Pick<NewReservation, "keyCharged" | "identityId">,
): Promise<{ reservationId?: string }> {
  if (req.credits?.reserve === undefined) return {};
  if (deps.reservations === undefined) {
    throw errors.unexpected(new Error("a reservation outside the transaction that charges it"));
  }
  const reservationId = await deps.reservations.hold({
    workspaceId: record.workspaceId,
    apiId: record.apiId,
    keyId: record.id,
    amount,
    ...charged,
  });
  return { reservationId };
}

/** The limits as they are after their tokens went back (unchanged when none were taken). */
function givenBack(
  decision: LimitDecision,
  checks: readonly LimitCheck[],
  limits: LimitResult[],
): LimitResult[] {
  return !decision.degraded
    ? limits.map((l, i) => ({ ...l, remaining: l.remaining + BigInt(checks[i]?.cost ?? 0) }))
    : limits;
}

/** Runs a spend; when it fails, the tokens the verification took go back before the error. */
async function givingBackOnFailure<T>(v: Spend, spend: () => Promise<T>): Promise<T> {
  try {
    return await spend();
  } catch (err) {
    await giveBack(v.deps, v.decision, v.checks, v.now);
    throw err;
  }
}

/**
 * Gives back the tokens a decision took, when the credits then fail. A decision made up
 * because the limiter's backend was unreachable (failure mode open) took none.
 */
function giveBack(
  deps: VerifyDeps,
  decision: LimitDecision,
  checks: readonly LimitCheck[],
  now: number,
): Promise<void> {
  return decision.degraded ? Promise.resolve() : deps.limiter.refund(checks, now);
}

function parseOrThrow(permissions: string): Query {
  try {
    return parseQuery(permissions);
  } catch (err) {
    if (!(err instanceof QuerySyntaxError)) throw err;
    throw errors.permissionsQuerySyntax(err.message, err.position);
  }
}

type LimitPlan =
  | { planned: PlannedLimit[]; checks: LimitCheck[]; unknown?: undefined }
  | { unknown: string; planned?: undefined; checks?: undefined };

/**
 * The plans of requests that name no limit, by key record: they depend on the record alone
 * (a change to the key's or identity's limits replaces the record; a spend's new balance
 * carries the plan over), and this is the common call. The limiter and the answer only read them.
 */
const autoPlans = new WeakMap<KeyRecordRow, LimitPlan>();

/**
 * Lets `to`, the record that replaced `from` in the cache with a new balance, use what was
 * derived from `from`: its limits and its identity block do not depend on the balance.
 */
function carryDerived(from: KeyRecordRow, to: KeyRecordRow): void {
  const plan = autoPlans.get(from);
  if (plan !== undefined) autoPlans.set(to, plan);
  carryIdentityBlock(from, to);
}

/** The limits this verification evaluates, with the counters they spend from. */
function limitPlan(record: KeyRecordRow, req: VerifyKeyRequest): LimitPlan {
  if (req.ratelimits.length > 0) return planFor(record, requestedLimits(req));
  let plan = autoPlans.get(record);
  if (!plan) {
    plan = planFor(record, []);
    autoPlans.set(record, plan);
  }
  return plan;
}

function planFor(record: KeyRecordRow, requested: RequestedLimit[]): LimitPlan {
  const plan = planLimits(
    record.keyRatelimits,
    record.identityRatelimits,
    requested,
    record.id,
    record.identityId,
  );
  if (plan.unknown !== undefined) return plan;
  const checks = plan.planned.map((p) => ({
    counter: counterName(record.workspaceId, p.scope, p.owner, p.name),
    limit: p.limit,
    durationMs: p.durationMs,
    cost: p.cost,
  }));
  return { planned: plan.planned, checks };
}

function requestedLimits(req: VerifyKeyRequest): RequestedLimit[] {
  return req.ratelimits.map((r) => ({
    name: r.name,
    cost: r.cost === undefined ? undefined : Number(r.cost),
    limit: r.limit === undefined ? undefined : Number(r.limit),
    durationMs: r.duration === undefined ? undefined : Number(r.duration),
  }));
}

function unknownLimit(name: string, r: KeyRecordRow): string {
  const owner =
    r.identityId === null
      ? `for key '${r.id}' and there is no identity connected`
      : `for key '${r.id}' nor identity '${r.identityId}' (externalId '${r.externalId}')`;
  return `Rate limit '${name}' was requested but does not exist ${owner}; give limit and duration for an ad-hoc limit.`;
}

/** What a verification answers and records. */
interface Outcome {
  deps: VerifyDeps;
  call: Call;
  req: VerifyKeyRequest;
  /** The key; null when it is not found, or not one the caller may see. */
  record: KeyRecordRow | null;
  code: VerifyCode;
  /** The balance to report, null for an unlimited key (with a record only). */
  balance?: number | null;
  /** The identity's pool to report, null when it has none (with a record only). */
  pool?: number | null;
  /** The rate limits evaluated, if that step ran (with a record only). */
  limits?: LimitResult[];
  /** Credits this verification took; none unless given. */
  spentCredits?: number;
  /** The reservation a VALID verification with `credits.reserve` made. */
  reservationId?: string;
}

/** The answer's data for an outcome. */
function outcomeData(o: Outcome): AnswerData {
  if (o.record === null) return notFoundData();
  const data = keyData(o.record, o.code, o.balance ?? null, o.limits ?? [], o.pool ?? null);
  if (o.reservationId !== undefined) data.reservationId = o.reservationId;
  return data;
}

/**
 * Records the verification event (never awaited) and the outcome metric, and answers. The
 * event belongs to the key's workspace, else the root key's. A verification with neither (an
 * unknown key and no root key) is only counted: anyone may send those, and storing each one
 * would let an anonymous caller fill the disk. No event is ever given a made-up workspace.
 */
function answer(o: Outcome): Answer {
  const { deps, call, record, code } = o;
  deps.metrics.verified(code);
  const data = outcomeData(o);
  const workspaceId = record?.workspaceId ?? call.principal?.workspaceId;
  if (workspaceId === undefined) {
    deps.metrics.unattributed(code);
    return { data };
  }
  deps.events.record({
    kind: "verification",
    time: deps.clock.now(),
    workspaceId,
    apiId: record?.apiId ?? null,
    keyId: record?.id ?? null,
    identityId: record?.identityId ?? null,
    externalId: record?.externalId ?? null,
    outcome: code,
    tags: o.req.tags,
    spentCredits: o.spentCredits ?? 0,
    requestId: call.requestId,
  });
  return { data };
}
