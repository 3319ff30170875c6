import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace";
import type { TracingSettings } from "./settings.js";
import { createTracing, type Tracing } from "./tracing.js";

/**
 * The Tracing the OTEL_* variables asked for. OTLP spans are batched and sent over HTTP (the
 * exporter reads OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT and their _TRACES_ forms
 * itself); console spans are printed as each one ends, for trying tracing out.
 */
export function tracingFromEnvironment(settings: TracingSettings): Tracing {
  const processors: SpanProcessor[] = settings.exporters.map((name) =>
    name === "otlp"
      ? new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })
      : new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter() }),
  );
  return createTracing(processors);
}
