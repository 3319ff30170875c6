import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  LimitRequest,
  LimitResponseSchema,
  MultiLimitRequest,
  MultiLimitResponseSchema,
} from "../../../gen/latchkey/v2/ratelimit_pb.js";
import type { Deps } from "../deps.js";
import { decide } from "./decide.js";

/** Takes tokens from one identifier's counter if the window has room; HTTP 200 either way. */
export async function limit(
  deps: Deps,
  req: LimitRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof LimitResponseSchema>> {
  const { passed, decided } = await decide(deps, ctx, [req]);
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

/** Decides several limits all-or-nothing; each reports its own state, in request order. */
export async function multiLimit(
  deps: Deps,
  req: MultiLimitRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof MultiLimitResponseSchema>> {
  const { passed, decided } = await decide(deps, ctx, req.limits);
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
