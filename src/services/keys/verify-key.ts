import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  VerifyKeyRequest,
  VerifyKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { applyRefill, latestRefillBoundary } from "../../domain/credits.js";
import { hashKey } from "../../domain/key-material.js";
import { parseQuery, type Query, QuerySyntaxError } from "../../domain/permission-query.js";
import { type PlannedLimit, planLimits, type RequestedLimit } from "../../domain/ratelimit-plan.js";
import { rootPermissionsAllow, rootPermissionsMayAllow } from "../../domain/root-permissions.js";
import { statusVerdict, type VerifyCode } from "../../domain/verification.js";
import { errors } from "../../errors/service-error.js";
import { counterName, type LimitCheck, type LimitDecision } from "../../ratelimit/limiter.js";
import type { KeyRecordRow } from "../../storage/queries/key-records.js";
import { type Call, callOf } from "../call.js";
import type { Deps } from "../deps.js";
import { verificationRecord } from "./verification-record.js";
import { keyData, limitResult, notFoundData } from "./verify-response.js";
import { verifyScope } from "./verify-scope.js";

type Answer = MessageInitShape<typeof VerifyKeyResponseSchema>;

/**
 * Verifies a key: a fixed sequence of checks, the first failure wins (not found, disabled,
 * expired, permissions, rate limits, credits). The key is looked for in one tenant only (see
 * `verifyScope`). Outcomes are answers with HTTP 200; only a bad request (400), a bad root key
 * or no tenant named where one must be (401/403), an unknown requested rate limit (412) and an
 * unreachable database (503) are errors. A refused verification spends neither tokens nor credits.
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
  // verify, else NOT_FOUND.
  const record = await verificationRecord(deps, scope, req.key, hashKey(req.key));
  const visible =
    record !== null &&
    (!principal ||
      (record.workspaceId === principal.workspaceId &&
        rootPermissionsAllow(principal.permissions, `api.${record.apiId}.verify_key`)));
  if (!record || !visible) return answer(deps, call, req, null, "NOT_FOUND", 0, notFoundData());
  // 5. DISABLED, EXPIRED, then the permissions query.
  const now = deps.clock.now();
  const balance = applyRefill(record, now).remaining;
  const status = statusVerdict(record, query, now);
  if (status)
    return answer(deps, call, req, record, status, 0, keyData(record, status, balance, []));
  // 6. Rate limits: take the tokens of every applicable limit, or none (all-or-nothing).
  const plan = limitPlan(record, req);
  if (plan.unknown !== undefined)
    throw errors.preconditionFailed(unknownLimit(plan.unknown, record));
  const { planned, checks } = plan;
  const decision: LimitDecision =
    checks.length > 0 ? await deps.limiter.check(checks, now) : { success: true, outcomes: [] };
  const limits = planned.map((p, i) =>
    limitResult(p, decision.outcomes[i] as (typeof decision.outcomes)[number]),
  );
  if (!decision.success) {
    return answer(
      deps,
      call,
      req,
      record,
      "RATE_LIMITED",
      0,
      keyData(record, "RATE_LIMITED", balance, limits),
    );
  }
  // 7. Credits: one conditional decrement, committed before we answer; refused → tokens back.
  // On gRPC and Connect a `credits` without `cost` reads as cost 0 (proto3; see docs/keys.md).
  const cost = req.credits ? Number(req.credits.cost) : 1;
  if (balance === null || cost === 0) {
    return answer(deps, call, req, record, "VALID", 0, keyData(record, "VALID", balance, limits));
  }
  let spent: Awaited<ReturnType<Deps["credits"]["spend"]>>;
  try {
    spent = await deps.credits.spend(record.id, cost, record.creditsKeyId);
  } catch (err) {
    await giveBack(deps, decision, checks, now);
    throw err;
  }
  if (spent.status === "spent" || spent.status === "insufficient") {
    // Keep this node's cached record in step with the balance it just read, so answers that
    // do not spend (cost 0, refusals) show a current balance; other nodes catch up by TTL.
    record.remaining = spent.remaining;
    if (record.refillAmount !== null)
      record.lastRefillAt = latestRefillBoundary(now, record.refillDay);
  }
  switch (spent.status) {
    case "spent":
      return answer(
        deps,
        call,
        req,
        record,
        "VALID",
        cost,
        keyData(record, "VALID", spent.remaining, limits),
      );
    case "unlimited":
      return answer(deps, call, req, record, "VALID", 0, keyData(record, "VALID", null, limits));
    case "insufficient": {
      await giveBack(deps, decision, checks, now);
      // The tokens went back: report the limits as they are now.
      const back = !decision.degraded
        ? limits.map((l, i) => ({ ...l, remaining: l.remaining + BigInt(checks[i]?.cost ?? 0) }))
        : limits;
      const data = keyData(record, "USAGE_EXCEEDED", spent.remaining, back);
      return answer(deps, call, req, record, "USAGE_EXCEEDED", 0, data);
    }
    case "gone":
      await giveBack(deps, decision, checks, now);
      return answer(deps, call, req, null, "NOT_FOUND", 0, notFoundData());
  }
}

/**
 * Gives back the tokens a decision took, when the credits then fail. A decision made up
 * because the limiter's backend was unreachable (failure mode open) took none.
 */
function giveBack(
  deps: Deps,
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
 * (a change to the key's or identity's limits replaces the record), and this is the common
 * call. The limiter and the answer only read them.
 */
const autoPlans = new WeakMap<KeyRecordRow, LimitPlan>();

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

/**
 * Records the verification event (never awaited) and the outcome metric, and answers. The
 * event belongs to the key's workspace, else the root key's. A verification with neither (an
 * unknown key and no root key) is only counted: anyone may send those, and storing each one
 * would let an anonymous caller fill the disk.
 */
function answer(
  deps: Deps,
  call: Call,
  req: VerifyKeyRequest,
  record: KeyRecordRow | null,
  code: VerifyCode,
  spentCredits: number,
  data: Answer["data"],
): Answer {
  deps.metrics.verified(code);
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
    tags: req.tags,
    spentCredits,
    requestId: call.requestId,
  });
  return { data };
}
