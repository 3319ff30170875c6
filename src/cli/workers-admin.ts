import { AggregatorRegistry } from "prom-client";
import type { Config } from "../config.js";
import { Readiness, type ReadinessCheck, ReadinessFailure } from "../health/readiness.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import { createAdminHandler, type MetricsSource } from "../server/admin.js";
import { connectionCounters, connectionLimits } from "../server/connection-limits.js";
import { type Listener, listen } from "../server/listener.js";
import type { WorkerPool } from "./worker-pool.js";
import { ask, asReport } from "./worker-protocol.js";

// The admin port of WORKERS, served by the primary with the handler a single server uses:
// readiness made of one check per worker (each asked over IPC), and /metrics summing the
// workers' registries with prom-client's aggregation rules.

/** A worker has this long to send its metrics, as prom-client's own cluster metrics allow. */
const METRICS_TIMEOUT_MS = 5_000;

/**
 * Worker `n` serves and reports itself ready. Its failing parts become the primary's
 * (`database`, `redis`, `shutdown`); a worker that does not serve (dead, restarting, still
 * starting) or does not answer fails as `worker <n>`.
 */
function workerCheck(pool: WorkerPool, n: number, timeoutMs: number): ReadinessCheck {
  return {
    name: `worker ${n}`,
    async probe() {
      const worker = pool.listening(n);
      if (!worker) throw new ReadinessFailure(`worker ${n}`, `worker ${n} is not serving`);
      const report = asReport(await ask(worker, "ready?", timeoutMs));
      if (!report.ready) {
        throw new ReadinessFailure(report.failing, `worker ${n}: ${report.failing.join(", ")}`);
      }
    },
  };
}

/** Ready when every worker serves and is ready; bounded and cached like a single server's. */
export function workersReadiness(pool: WorkerPool, config: Config, log: Logger): Readiness {
  const checks = Array.from({ length: pool.size }, (_, i) =>
    workerCheck(pool, i + 1, config.readyTimeoutMs),
  );
  return new Readiness(checks, {
    timeoutMs: config.readyTimeoutMs,
    cacheMs: config.readyCacheMs,
    log,
  });
}

/**
 * The sum of the serving workers' metrics and the primary's own (its process, its admin
 * connections). A worker that does not answer fails the scrape rather than leaving its
 * counts out: a sum missing one worker would look like a counter reset, then a jump.
 */
export function workersMetrics(pool: WorkerPool, own: Metrics): MetricsSource {
  return {
    contentType: own.registry.contentType,
    async metrics() {
      const parts = await Promise.all([
        own.registry.getMetricsAsJSON(),
        ...pool.serving().map((w) => ask(w, "metrics?", METRICS_TIMEOUT_MS)),
      ]);
      return AggregatorRegistry.aggregate(parts as object[]).metrics();
    },
  };
}

/** Listens on ADMIN_PORT with the admin handler over the workers' readiness and metrics. */
export function listenAdmin(
  config: Config,
  readiness: Readiness,
  metrics: MetricsSource,
  own: Metrics,
): Promise<Listener> {
  return listen(
    createAdminHandler(metrics, readiness),
    config.adminPort,
    config.adminHost,
    connectionLimits(config),
    connectionCounters(own, "admin"),
  );
}
