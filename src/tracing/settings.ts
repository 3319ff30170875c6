import { ConfigError } from "../config/parsers.js";

/** The span exporters Latchkey can send traces to. */
export type TraceExporterName = "otlp" | "console";

/** What the OTEL_* variables ask of tracing, when they ask for it. */
export interface TracingSettings {
  exporters: TraceExporterName[];
}

/** A tracing variable Latchkey cannot honour: the server refuses to start, naming it. */
export class TracingSettingsError extends ConfigError {
  override name = "TracingSettingsError";
}

const EXPORTERS = new Set<string>(["otlp", "console", "none"]);

/**
 * Reads the standard OpenTelemetry variables and decides whether tracing is on. It is off
 * unless asked for, so that a server nobody traces loads no SDK and does no tracing work:
 *
 * - `OTEL_SDK_DISABLED=true` turns it off, whatever else is set;
 * - `OTEL_TRACES_EXPORTER` (a comma-separated list of `otlp`, `console`, `none`) turns it on
 *   with those exporters; `none` alone keeps it off;
 * - otherwise `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` turns it on
 *   with the OTLP exporter.
 *
 * OTLP is sent over HTTP with JSON bodies; another `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`, or an
 * exporter name outside the list, is refused rather than silently ignored. Reads no file and
 * imports nothing from OpenTelemetry.
 */
export function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const listed = env.OTEL_TRACES_EXPORTER?.trim();
  let exporters: TraceExporterName[];
  if (listed) {
    const names = listed.split(",").map((s) => s.trim().toLowerCase());
    const unknown = names.filter((n) => !EXPORTERS.has(n));
    if (unknown.length > 0) {
      throw new TracingSettingsError(
        `OTEL_TRACES_EXPORTER names ${unknown.join(", ")}: Latchkey exports traces to otlp, console or none`,
      );
    }
    exporters = [...new Set(names.filter((n) => n !== "none"))] as TraceExporterName[];
  } else if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    exporters = ["otlp"];
  } else {
    return undefined;
  }
  if (exporters.length === 0) return undefined;
  if (exporters.includes("otlp")) {
    const protocol = (
      env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
      env.OTEL_EXPORTER_OTLP_PROTOCOL ||
      "http/json"
    ).trim();
    if (protocol !== "http/json") {
      throw new TracingSettingsError(
        `OTEL_EXPORTER_OTLP_PROTOCOL ${protocol}: Latchkey sends OTLP traces as http/json`,
      );
    }
  }
  return { exporters };
}
