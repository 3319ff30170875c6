import cluster from "node:cluster";
import { fileURLToPath } from "node:url";
import { SETTINGS, type SettingName } from "../config/settings.js";
import { type Config, ConfigError, type ConfigFlags } from "../config.js";
import type { Readiness } from "../health/readiness.js";
import { createLogger } from "../log.js";
import { createMetrics } from "../metrics.js";
import type { Listener } from "../server/listener.js";
import { describeFailure } from "./failure.js";
import { type Io, writeLine } from "./io.js";
import { serveWorker } from "./worker.js";
import { WorkerPool } from "./worker-pool.js";
import { type ListeningMessage, WORKER_SLOT_ENV, type WorkersError } from "./worker-protocol.js";
import { listenAdmin, workersMetrics, workersReadiness } from "./workers-admin.js";

// `serve` with WORKERS > 1: a primary process forks that many workers, each a whole server
// (startApp) sharing the main port and the gRPC port through node:cluster, and serves the
// admin port for all of them. Every guarantee a single server keeps holds across workers as
// it does across nodes: credits are spent in PostgreSQL, rate limits counted in Redis, and
// caches invalidated through the database's LISTEN/NOTIFY.

/** The bin: each worker runs it again, as `latchkey serve`. */
const BIN = fileURLToPath(new URL("./main.js", import.meta.url));

/** Why this configuration cannot run `workers` processes, if it cannot. */
export function workersRefusal(config: Config, label: string): string | undefined {
  const what = `${label}=${config.workers}`;
  if (config.databaseUrl === undefined) {
    return `${what} needs DATABASE_URL: the embedded database (DATA_DIR) belongs to one process; use PostgreSQL, or one worker`;
  }
  if (config.redisUrl === undefined) {
    return `${what} needs REDIS_URL: without Redis each worker would count rate limits on its own, so they would no longer be exact; set REDIS_URL, or use one worker`;
  }
  return undefined;
}

/**
 * The workers' environment: the primary's, with the settings given as flags made variables
 * (a worker runs plain `latchkey serve`, and a secret given as a flag then does not show in
 * `ps` a second time per worker), and WORKERS as a number (`auto` resolved once).
 */
function workerEnvironment(env: Io["env"], flags: ConfigFlags, workers: number) {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  for (const [name, value] of Object.entries(flags)) {
    if (value !== undefined) out[SETTINGS[name as SettingName].env] = value;
  }
  out.WORKERS = String(workers);
  return out;
}

/** `serve` with WORKERS > 1: the primary, or (in a forked process) one worker. */
export async function serveWorkers(config: Config, io: Io, flags: ConfigFlags): Promise<void> {
  const refusal = workersRefusal(config, flags.workers === undefined ? "WORKERS" : "--workers");
  if (refusal) throw new ConfigError(refusal);
  if (cluster.isWorker) return serveWorker(config, io, Number(io.env[WORKER_SLOT_ENV]));
  return servePrimary(config, io, flags);
}

/**
 * Starts worker 1, then the others once it listens (so that the first start's root key is
 * created and printed once), then the admin port; resolves once all of it serves. SIGTERM
 * or SIGINT stops every worker gracefully, then the admin port, and exits 0 (1 when a worker
 * did not stop cleanly); a second signal kills the workers and exits 1 at once.
 */
async function servePrimary(config: Config, io: Io, flags: ConfigFlags): Promise<void> {
  const log = createLogger(config.logLevel, io.stdout).child({ primary: true });
  cluster.setupPrimary({ exec: BIN, args: ["serve"] });
  let admin: Listener | undefined;
  let readiness: Readiness | undefined;
  let starting = true;
  let stopping: Promise<boolean> | undefined;
  // The longest a worker's stop may take: drain, then write its events, each bounded.
  const stopBoundMs = 2 * config.shutdownTimeoutMs + 10_000;
  const stopAll = () => {
    stopping ??= (async () => {
      readiness?.stop();
      const clean = await pool.stop(stopBoundMs);
      await admin?.drain(config.shutdownTimeoutMs);
      log.info("latchkey stopped");
      return clean;
    })();
    return stopping;
  };

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      pool.kill();
      process.exit(1);
    }
    log.info({ signal }, "shutting down");
    void stopAll().then((clean) => process.exit(clean ? 0 : 1));
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  let first: ListeningMessage | undefined;
  // By slot: a worker restarted during the start must not count twice.
  const listened = new Set<number>();
  let started: { resolve(): void; reject(err: WorkersError): void } | undefined;
  let allStarted = false;
  const allListening = new Promise<void>((resolve, reject) => {
    started = { resolve, reject };
  }).then(() => {
    allStarted = true;
  });
  allListening.catch(() => {});
  const env = workerEnvironment(io.env, flags, config.workers);
  const pool = new WorkerPool(config.workers, env, log, {
    listening(n, message) {
      if (!starting) return;
      listened.add(n);
      if (n === 1 && !first) {
        first = message;
        for (let i = 2; i <= config.workers; i++) pool.start(i);
      }
      if (listened.size === config.workers) started?.resolve();
    },
    giveUp(err) {
      void stopAll().then(() => {
        // Before every worker listened, serve fails the way any start fails; later, the
        // primary reports it and ends here.
        if (!allStarted) return started?.reject(err);
        const failure = describeFailure(err);
        writeLine(io.stderr, failure.text);
        process.exit(failure.exitCode);
      });
    },
  });

  pool.start(1);
  try {
    await allListening;
  } catch (err) {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    throw err;
  }
  if (stopping) return; // a signal came during the start: the stop ends the process
  const own = createMetrics();
  readiness = workersReadiness(pool, config, log);
  try {
    admin = await listenAdmin(config, readiness, workersMetrics(pool, own), own);
  } catch (err) {
    await stopAll();
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    throw err;
  }
  starting = false;
  await readiness.report();
  log.info(
    {
      port: first?.port,
      grpcPort: first?.grpcPort,
      adminPort: admin.port,
      adminHost: config.adminHost,
      engine: first?.engine,
      workers: config.workers,
    },
    "latchkey listening",
  );
}
