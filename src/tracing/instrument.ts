/**
 * What the server wraps while tracing is on, imported by it only then, so that with tracing
 * off none of this (nor OpenTelemetry) is loaded and no request does any tracing work.
 */
export { withTraceIds } from "./log-trace-ids.js";
export { procedureSpans } from "./procedure-spans.js";
export { tracedDb } from "./traced-db.js";
export { tracedRedisLimiter } from "./traced-limiter.js";
