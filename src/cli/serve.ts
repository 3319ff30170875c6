import type { App } from "../app.js";
import { SETTINGS, type SettingName } from "../config/settings.js";
import { type Config, loadConfig } from "../config.js";
import { createLogger } from "../log.js";
import type { Command, Parsed } from "./command.js";
import type { Io } from "./io.js";
import { launchApp } from "./launch.js";
import { settingFlags, settingOption } from "./setting-flags.js";

const ALL_SETTINGS = Object.keys(SETTINGS) as SettingName[];

/** serve's configuration: every setting from its flag when given, else from its variable. */
export function serveConfig(values: Parsed["values"], env: Io["env"]): Config {
  return loadConfig(env, settingFlags(values, ALL_SETTINGS));
}

/** Starts the app, and stops it gracefully on SIGTERM or SIGINT (a second signal: at once). */
async function serve(config: Config, io: Io): Promise<void> {
  // The handlers go in before the app starts: it says "listening" from inside startApp, and a
  // SIGTERM sent on that line must still stop it gracefully (flushing its events), not kill it.
  let app: App | undefined;
  let stopping: string | undefined;
  let signals = 0;
  const stop = (signal: string) => {
    stopping = signal;
    if (!app) return; // stopped as soon as it has started
    const running = app;
    running.deps.log.info({ signal }, "shutting down");
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        running.deps.log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) process.exit(1);
    stop(signal);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  try {
    app = await launchApp(config, createLogger(config.logLevel, io.stdout));
  } catch (err) {
    // A start that failed leaves nothing to stop: the caller reports the failure.
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    throw err;
  }
  if (stopping) stop(stopping);
}

export const serveCommand: Command = {
  name: "serve",
  usage: "[options]",
  summary:
    "Serves every door: /v2 JSON, Connect, gRPC-web and gRPC on --port, gRPC on --grpc-port.",
  details:
    "/metrics, /health/live and /health/ready are on --admin-port (on 127.0.0.1 unless\n" +
    "--admin-host says otherwise); the health endpoints are on --port too.\n" +
    "With --workers above 1, a primary process forks that many servers sharing the ports\n" +
    "and serves --admin-port for all of them (docs/operations.md, WORKERS).\n" +
    "Every option is also an environment variable (named in brackets); an option beats its\n" +
    "variable. docs/configuration.md explains each.",
  options: Object.fromEntries(ALL_SETTINGS.map(settingOption)),
  async run(parsed, io) {
    const config = serveConfig(parsed.values, io.env);
    if (config.workers === 1) return serve(config, io);
    // Loaded only for WORKERS > 1: a single server pays nothing for node:cluster.
    const { serveWorkers } = await import("./workers.js");
    return serveWorkers(config, io, settingFlags(parsed.values, ALL_SETTINGS));
  },
};
