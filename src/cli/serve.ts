import { type App, startApp } from "../app.js";
import { SETTINGS, type SettingName } from "../config/settings.js";
import { loadConfig } from "../config.js";
import type { Command } from "./command.js";
import { settingFlags, settingOption } from "./setting-flags.js";

const ALL_SETTINGS = Object.keys(SETTINGS) as SettingName[];

/** Starts the app, and stops it gracefully on SIGTERM or SIGINT (a second signal: at once). */
async function serve(config: ReturnType<typeof loadConfig>): Promise<void> {
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
  const onSignal = (signal: string) => {
    signals++;
    if (signals > 1) process.exit(1);
    stop(signal);
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  app = await startApp({ config });
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
    "Every option is also an environment variable (named in brackets); an option beats its\n" +
    "variable. docs/deploying.md explains each.",
  options: Object.fromEntries(ALL_SETTINGS.map(settingOption)),
  run: (parsed) => serve(loadConfig(process.env, settingFlags(parsed.values, ALL_SETTINGS))),
};
