import { pino } from "pino";
import type { Logger } from "../log.js";
import type { Tracing } from "./tracing.js";

type Mixin = (obj: object, level: number, logger: Logger) => object;
type WithMixin = Logger & { [pino.symbols.mixinSym]?: Mixin };

/**
 * A child of `log` whose lines written inside a traced call carry `trace_id` and `span_id`
 * (the names OpenTelemetry's log data model gives them), so a line can be found from its
 * trace and back. It installs a pino mixin through `pino.symbols`, pino's interface for
 * integrations, since a child logger takes no mixin option; a mixin `log` already has still
 * runs. Lines written outside a call are unchanged.
 */
export function withTraceIds(log: Logger, tracing: Tracing): Logger {
  const child = log.child({}) as WithMixin;
  const inherited = (log as WithMixin)[pino.symbols.mixinSym];
  child[pino.symbols.mixinSym] = (obj, level, logger) => {
    const own = inherited ? inherited(obj, level, logger) : {};
    const span = tracing.activeSpan();
    if (span === undefined) return own;
    const { traceId, spanId } = span.spanContext();
    return { ...own, trace_id: traceId, span_id: spanId };
  };
  return child;
}
