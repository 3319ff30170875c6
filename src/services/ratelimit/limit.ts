import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { LimitRequest, LimitResponseSchema } from "../../../gen/latchkey/v2/ratelimit_pb.js";
import type { Deps } from "../deps.js";
import { decide } from "./decide.js";
import { setRateLimitHeaders } from "./headers.js";

/**
 * Takes tokens from one identifier's counter if the window has room; HTTP 200 either way,
 * with the `RateLimit-Policy` and `RateLimit` header fields of the decision.
 */
export async function limit(
  deps: Deps,
  req: LimitRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof LimitResponseSchema>> {
  const { passed, decided } = await decide(deps, ctx, [req]);
  setRateLimitHeaders(ctx, decided, deps.clock.now());
  const d = decided[0] as (typeof decided)[number];
  return {
    data: {
      success: passed,
      limit: BigInt(d.limit),
      remaining: BigInt(d.outcome.remaining),
      reset: BigInt(d.outcome.reset),
      ...(d.overrideId ? { overrideId: d.overrideId } : {}),
    },
  };
}
