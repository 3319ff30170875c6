import type { HandlerContext } from "@connectrpc/connect";
import type { LimitRequest } from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { matchOverride } from "../../domain/overrides.js";
import { counterName, type LimitCheck, type LimitOutcome } from "../../ratelimit/limiter.js";
import { authorize } from "../auth.js";
import { callOf, principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { namespaceForLimit } from "./namespaces.js";

/** One decided limit, as the procedures report it. */
export interface Decided {
  namespace: string;
  identifier: string;
  limit: number;
  /** The window that applied: the override's when one matched. */
  durationMs: number;
  outcome: LimitOutcome;
  overrideId: string | undefined;
}

/**
 * Decides limits all-or-nothing: resolves (or creates) each namespace, checks the caller may
 * limit in it, applies the identifier's override (limit and window), and asks the limiter
 * to take every cost or none. Each decision becomes an analytics event unless the caller sent
 * `X-Unkey-Metrics: disabled`.
 */
export async function decide(
  deps: Deps,
  ctx: HandlerContext,
  requests: readonly LimitRequest[],
): Promise<{ passed: boolean; decided: Decided[] }> {
  const { workspaceId } = principalOf(ctx);
  const plans = [];
  for (const r of requests) {
    const entry = await namespaceForLimit(deps, ctx, workspaceId, r.namespace);
    authorize(ctx, { namespaceId: entry.namespace.id });
    const override = matchOverride(entry.overrides, r.identifier);
    const check: LimitCheck = {
      counter: counterName(workspaceId, "ns", entry.namespace.id, r.identifier),
      limit: override ? override.limit : Number(r.limit),
      durationMs: override ? override.durationMs : Number(r.duration),
      cost: r.cost === undefined ? 1 : Number(r.cost),
    };
    plans.push({ r, namespaceId: entry.namespace.id, overrideId: override?.id, check });
  }
  const now = deps.clock.now();
  const decision = await deps.limiter.check(
    plans.map((p) => p.check),
    now,
  );
  const requestId = callOf(ctx.values).requestId;
  // The public system's SDK sends this to keep a decision out of analytics.
  const logged = ctx.requestHeader.get("x-unkey-metrics")?.toLowerCase() !== "disabled";
  const decided = plans.map((p, i) => {
    const outcome = decision.outcomes[i] as LimitOutcome;
    if (logged)
      deps.events.record({
        kind: "ratelimit",
        time: now,
        workspaceId,
        namespaceId: p.namespaceId,
        identifier: p.r.identifier,
        passed: decision.success,
        cost: decision.success ? p.check.cost : 0,
        limit: p.check.limit,
        durationMs: p.check.durationMs,
        remaining: outcome.remaining,
        overrideId: p.overrideId ?? null,
        requestId,
      });
    return {
      namespace: p.r.namespace,
      identifier: p.r.identifier,
      limit: p.check.limit,
      durationMs: p.check.durationMs,
      outcome,
      overrideId: p.overrideId,
    };
  });
  return { passed: decision.success, decided };
}
