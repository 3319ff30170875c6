import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  MultiLimitRequest,
  MultiLimitResponseSchema,
} from "../../../gen/latchkey/v2/ratelimit_pb.js";
import type { Deps } from "../deps.js";
import { decide } from "./decide.js";
import { setRateLimitHeaders } from "./headers.js";

/**
 * Decides several limits all-or-nothing; each reports its own state, in request order, in
 * the answer and in its `RateLimit-Policy` and `RateLimit` header fields.
 */
export async function multiLimit(
  deps: Deps,
  req: MultiLimitRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof MultiLimitResponseSchema>> {
  const { passed, decided } = await decide(deps, ctx, req.limits);
  setRateLimitHeaders(ctx, decided, deps.clock.now());
  return {
    data: {
      passed,
      limits: decided.map((d) => ({
        namespace: d.namespace,
        identifier: d.identifier,
        limit: BigInt(d.limit),
        remaining: BigInt(d.outcome.remaining),
        reset: BigInt(d.outcome.reset),
        passed: d.outcome.passed,
        ...(d.overrideId ? { overrideId: d.overrideId } : {}),
      })),
    },
  };
}
