import { type Context, type Span, type Tracer, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { type SpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";

/**
 * The server's tracer and the context its spans travel in. Nothing here is registered
 * globally (no global tracer provider, context manager or propagator): two servers in one
 * process trace independently, and a stopped one leaves nothing behind.
 */
export interface Tracing {
  readonly tracer: Tracer;
  /** The context of the code running now: the procedure span's, inside a traced call. */
  active(): Context;
  /** Runs `fn` with `ctx` as the active context, for everything it awaits. */
  with<T>(ctx: Context, fn: () => T): T;
  /** The span of the running call, if any. */
  activeSpan(): Span | undefined;
  /**
   * Ends tracing: exports what is still buffered, waiting for the exporter at most
   * `timeoutMs` (a collector that does not answer must not hold a stopping server).
   */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** The name of the instrumentation scope of every span. */
export const TRACER_NAME = "latchkey";

/**
 * A Tracing that hands its finished spans to `processors`. The resource is named by
 * OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, `latchkey` unless they name it.
 */
export function createTracing(processors: SpanProcessor[]): Tracing {
  // The environment's names (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) win over ours.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": TRACER_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({ resource, spanProcessors: processors });
  const contexts = new AsyncLocalStorageContextManager().enable();
  return {
    tracer: provider.getTracer(TRACER_NAME),
    active: () => contexts.active(),
    with: (ctx, fn) => contexts.with(ctx, fn),
    activeSpan: () => trace.getSpan(contexts.active()),
    async shutdown(timeoutMs = 5_000) {
      contexts.disable();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs).unref();
      });
      await Promise.race([provider.shutdown(), late]);
      clearTimeout(timer);
    },
  };
}
