import type { App } from "../app.js";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";

/**
 * Starts the server as the bin does, for `serve` and for each worker of WORKERS. The database
 * opens first: the embedded engine boots on a thread of its own while this one loads the
 * server's modules (each takes most of a second), and a start takes the longer of the two
 * instead of their sum. startApp owns it and reports its failure.
 */
export async function launchApp(config: Config, log: Logger, serveAdmin = true): Promise<App> {
  const { openDatabaseWhenUp } = await import("../startup/database.js");
  const opening = openDatabaseWhenUp(config, log);
  opening.catch(() => {});
  // Loaded here, not with the command line: help, --version and the admin commands do not
  // pay for loading every door.
  const { startApp } = await import("../app.js");
  return startApp({ config, log, opening, serveAdmin });
}
