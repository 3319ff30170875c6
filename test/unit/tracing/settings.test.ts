import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { TracingSettingsError, tracingSettings } from "../../../src/tracing/settings.js";

describe("tracingSettings", () => {
  it("is off unless an exporter or an OTLP endpoint is named", () => {
    expect(tracingSettings({})).toBeUndefined();
    expect(tracingSettings({ OTEL_SERVICE_NAME: "auth" })).toBeUndefined();
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: "console" })).toEqual({
      exporters: ["console"],
    });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: " OTLP , console,otlp" })).toEqual({
      exporters: ["otlp", "console"],
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({
      exporters: ["otlp"],
    });
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" }),
    ).toEqual({ exporters: ["otlp"] });
  });

  it("lets OTEL_SDK_DISABLED and an explicit none win over an endpoint", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(tracingSettings({ ...endpoint, OTEL_SDK_DISABLED: "TRUE" })).toBeUndefined();
    expect(tracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
    expect(tracingSettings({ ...endpoint, OTEL_SDK_DISABLED: "false" })).toEqual({
      exporters: ["otlp"],
    });
  });

  it("refuses an exporter or an OTLP protocol it cannot honour", () => {
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(TracingSettingsError);
    expect(() =>
      tracingSettings({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    ).toThrow(/http\/json/);
    expect(
      tracingSettings({ OTEL_TRACES_EXPORTER: "console", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    ).toEqual({ exporters: ["console"] });
  });
});

const ROOT = resolve(import.meta.dirname, "../../..");
/** Static imports and re-exports, not `import type` (erased) nor `import()` (loaded on demand). */
const STATIC_IMPORT =
  /^(?:import|export)(?!\s+type\b)[^;]*?\bfrom\s+"([^"]+)";|^import\s+"([^"]+)";/gm;

/** The packages the server loads at start, following its source's static imports. */
function staticPackages(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = [join(ROOT, entry)];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(STATIC_IMPORT)) {
      const spec = (m[1] ?? m[2]) as string;
      if (spec.startsWith(".")) queue.push(resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
      else packages.add(spec);
    }
  }
  return packages;
}

describe("the server without tracing", () => {
  it("loads no OpenTelemetry package of its own at start: the SDK is imported only when asked for", () => {
    // The bin's command line, and the server it loads on demand when `serve` starts.
    const loaded = [...staticPackages("src/cli/commands.ts"), ...staticPackages("src/app.ts")];
    expect(loaded).toContain("pino");
    expect(loaded.filter((p) => p.startsWith("@opentelemetry/"))).toEqual([]);
  });
});
