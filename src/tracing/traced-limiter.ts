import { SpanKind, trace } from "@opentelemetry/api";
import type { LimitCheck, Limiter } from "../ratelimit/limiter.js";
import { ended } from "./traced-db.js";
import type { Tracing } from "./tracing.js";

/**
 * The Redis limiter with a CLIENT span per round trip (a decision or a refund), made only
 * inside a traced call, as a child of its span. A span counts the counters it touched and
 * never names them: a counter's name holds the key's or identity's id.
 */
export function tracedRedisLimiter(limiter: Limiter, tracing: Tracing): Limiter {
  const inSpan = <T>(operation: string, checks: readonly LimitCheck[], run: () => Promise<T>) => {
    const parent = tracing.active();
    if (trace.getSpan(parent) === undefined) return run();
    const span = tracing.tracer.startSpan(
      `ratelimit ${operation}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "db.system.name": "redis",
          "db.operation.name": operation,
          "latchkey.ratelimit.counters": checks.length,
        },
      },
      parent,
    );
    return ended(span, run());
  };
  return {
    check: (checks, now) => inSpan("check", checks, () => limiter.check(checks, now)),
    refund: (checks, now) => inSpan("refund", checks, () => limiter.refund(checks, now)),
    close: () => limiter.close(),
  };
}
