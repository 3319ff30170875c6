import { tracingSettings } from "./settings.js";
import type { Tracing } from "./tracing.js";

/**
 * The Tracing the OTEL_* variables ask for (see settings.ts), or undefined when they ask for
 * none. The SDK and the exporters are imported only then: a server without tracing never
 * loads them.
 */
export async function startTracing(env: NodeJS.ProcessEnv): Promise<Tracing | undefined> {
  const settings = tracingSettings(env);
  if (settings === undefined) return undefined;
  const { tracingFromEnvironment } = await import("./from-environment.js");
  return tracingFromEnvironment(settings);
}
