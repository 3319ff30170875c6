import type { HandlerContext } from "@connectrpc/connect";
import { rateLimitFields } from "../../domain/ratelimit-headers.js";
import type { Decided } from "./decide.js";

/**
 * Puts the `RateLimit-Policy` and `RateLimit` header fields of decided limits on the answer
 * (domain/ratelimit-headers.ts), one item per limit named after its namespace: HTTP headers on
 * the /v2 and Connect doors, response metadata on gRPC. The answer's body says the same; the
 * fields let a caller pass them on to its own clients, or any HTTP tooling read them.
 */
export function setRateLimitHeaders(ctx: HandlerContext, decided: readonly Decided[], now: number) {
  const fields = rateLimitFields(
    decided.map((d) => ({
      name: d.namespace,
      limit: d.limit,
      durationMs: d.durationMs,
      remaining: d.outcome.remaining,
      resetMs: d.outcome.reset,
      exceeded: !d.outcome.passed,
    })),
    now,
  );
  if (!fields) return;
  ctx.responseHeader.set("ratelimit-policy", fields.policy);
  ctx.responseHeader.set("ratelimit", fields.current);
}
