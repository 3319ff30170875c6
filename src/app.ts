import { setMaxListeners } from "node:events";
import { bootstrap } from "./admin/bootstrap.js";
import { eventRowsPerStatement } from "./analytics/batch-writer.js";
import { EventBuffer } from "./analytics/event-buffer.js";
import { scheduleRetention } from "./analytics/retention.js";
import { InvalidationBus } from "./cache/bus.js";
import { createCaches } from "./cache/caches.js";
import { SoleWorkspace } from "./cache/sole-workspace.js";
import type { Config } from "./config.js";
import { type Clock, systemClock } from "./domain/clock.js";
import { newId } from "./domain/ids.js";
import { databaseCheck, redisCheck } from "./health/checks.js";
import { Readiness } from "./health/readiness.js";
import { createLogger, type Logger } from "./log.js";
import {
  createMetrics,
  type Metrics,
  registerDatabaseRestarts,
  registerEventMetrics,
} from "./metrics.js";
import { MemoryLimiter } from "./ratelimit/memory.js";
import { ResilientLimiter } from "./ratelimit/resilient.js";
import { createAdminHandler } from "./server/admin.js";
import { createConnectDoor } from "./server/connect-door.js";
import { connectionCounters, connectionLimits } from "./server/connection-limits.js";
import { createConsoleFiles } from "./server/console-files.js";
import { createConsoleSessionRoutes } from "./server/console-session-routes.js";
import { createGateway } from "./server/gateway/exchange.js";
import { createForwardAuth } from "./server/gateway/forward-auth.js";
import { startGrpcDoor } from "./server/grpc-door.js";
import { healthRoutes } from "./server/health-routes.js";
import { authenticateInterceptor } from "./server/interceptors/authenticate.js";
import { requestContextInterceptor } from "./server/interceptors/request-context.js";
import { validateInterceptor } from "./server/interceptors/validate.js";
import { createJsonDoor } from "./server/json-door.js";
import { listen } from "./server/listener.js";
import { openApiDocument } from "./server/openapi.js";
import { createPages } from "./server/pages.js";
import { consoleRoutes, createRouter } from "./server/router.js";
import { createSecretScanningDoor } from "./server/secret-scanning-door.js";
import type { Deps } from "./services/deps.js";
import { createServices } from "./services/index.js";
import { scheduleReservationSweep } from "./services/keys/reservation-sweep.js";
import { receiveGithubReport } from "./services/secret-scanning/github-receiver.js";
import { PublicKeys } from "./services/secret-scanning/public-keys.js";
import { WorkspaceSlots } from "./services/workspace-slots.js";
import { openDatabaseWhenUp } from "./startup/database.js";
import { rootKeyDestination, rootKeyKeeper } from "./startup/first-root-key.js";
import { connectRedisLimiter } from "./startup/redis.js";
import { CreditSpender } from "./storage/credit-spender.js";
import type { Db } from "./storage/db.js";
import { loadMigrations, migrate } from "./storage/migrate.js";
import { analyticsSchema } from "./storage/queries/analytics.js";
import { startTracing } from "./tracing/start.js";
import type { Tracing } from "./tracing/tracing.js";
import { startWebhooks, type Webhooks } from "./webhooks/webhooks.js";

/** What tests and embedders may supply instead of the defaults. */
export interface AppOptions {
  config: Config;
  /** A database to use (not closed by stop); by default one is opened from the config. */
  db?: Db;
  /**
   * The configured database, already being opened (`openDatabaseWhenUp`): the app owns it as
   * if it had opened it. The bin starts it before loading the server's modules, so that the
   * embedded engine boots on its thread meanwhile.
   */
  opening?: Promise<Db>;
  clock?: Clock;
  log?: Logger;
  /**
   * Receives the secret of a root key created on first start; by default it is printed when
   * stdout is a terminal, else written to BOOTSTRAP_ROOT_KEY_FILE (startup/first-root-key.ts).
   */
  onRootKeyCreated?: (secret: string) => void;
  /**
   * Traces calls with this Tracing (not shut down by stop) instead of the one the OTEL_*
   * variables ask for (src/tracing/settings.ts).
   */
  tracing?: Tracing;
  /**
   * Whether this process serves the admin port (default true). A worker of `WORKERS` does
   * not: its primary serves /metrics and readiness for every worker (cli/workers.ts).
   */
  serveAdmin?: boolean;
}

/**
 * The receiver of GitHub's secret-scanning reports, when GITHUB_SECRET_SCANNING_PUBLIC_KEYS
 * names the keys they are signed with; without it the path is an unknown one (404).
 */
function secretScanningDoor(deps: Deps) {
  const setting = deps.config.githubSecretScanningPublicKeys;
  if (setting === undefined) return undefined;
  const keys = new PublicKeys(setting, deps.clock, deps.log);
  return createSecretScanningDoor({
    receive: (report) => receiveGithubReport(deps, keys, report),
    maxBodyBytes: deps.config.maxBodyBytes,
    docsUrl: deps.config.docsUrl,
    log: deps.log,
    metrics: deps.metrics,
  });
}

/** A running Latchkey server. */
export interface App {
  readonly port: number;
  readonly url: string;
  /** The gRPC port, when GRPC_PORT is set. */
  readonly grpcPort: number | undefined;
  /**
   * Port of the admin listener (ADMIN_PORT): /metrics and the health endpoints; undefined
   * when another process serves it (`serveAdmin: false`).
   */
  readonly adminPort: number | undefined;
  /** `http://<ADMIN_HOST>:<adminPort>` (127.0.0.1 when it binds every interface). */
  readonly adminUrl: string | undefined;
  /** Whether the server can answer calls; off from the moment `stop` begins. */
  readonly readiness: Readiness;
  readonly deps: Deps;
  readonly metrics: Metrics;
  /** This node's webhook dispatcher and passes. */
  readonly webhooks: Webhooks;
  /** Requests received whose responses have not completed. */
  inflight(): number;
  /**
   * Turns readiness off (health answers 503 and NOT_SERVING), then drains in-flight
   * requests and releases every resource; the admin port closes last.
   */
  stop(): Promise<void>;
}

/** `http://<host>:<port>` of the admin port, by loopback when it binds every interface. */
function adminUrlOf(adminHost: string, port: number): string {
  const host = ["0.0.0.0", "::", ""].includes(adminHost) ? "127.0.0.1" : adminHost;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Opens storage, migrates, bootstraps and serves every door on `config.port` (and gRPC on
 * `config.grpcPort`), with /metrics and the health endpoints on `config.adminPort`.
 */
export async function startApp(opts: AppOptions): Promise<App> {
  const { config } = opts;
  const ownsTracing = opts.tracing === undefined;
  const tracing = opts.tracing ?? (await startTracing(process.env));
  // Loaded only with tracing on: without it nothing below is wrapped, so no call pays for it.
  const traced = tracing && (await import("./tracing/instrument.js"));
  const baseLog = opts.log ?? createLogger(config.logLevel);
  const log = traced ? traced.withTraceIds(baseLog, tracing) : baseLog;
  const clock = opts.clock ?? systemClock;
  const ownsDb = opts.db === undefined;
  const untracedDb =
    opts.db ??
    (await (opts.opening ?? openDatabaseWhenUp(config, log)).catch(async (err: unknown) => {
      if (ownsTracing) await tracing?.shutdown(config.shutdownTimeoutMs).catch(() => {});
      throw err;
    }));
  const db = traced ? traced.tracedDb(untracedDb, tracing) : untracedDb;
  // Analytics queries get connections of their own: a tenant's long queries cannot take the
  // connections that key procedures need. PGlite has one connection, shared.
  const analyticsPool = {
    max: config.analyticsPoolSize,
    statementTimeoutMs: config.analyticsTimeoutMs,
  };
  const analyticsDb = db.openPool?.(analyticsPool) ?? db;
  const closeAnalyticsDb = () => (analyticsDb === db ? Promise.resolve() : analyticsDb.close());
  // Started before the listeners: a start that fails after it stops it before closing the database.
  let webhooks: Webhooks | undefined;
  try {
    await migrate(db, clock.now());
    const metrics = createMetrics();
    const bus = new InvalidationBus(newId("node"), () => metrics.invalidationsReceived.inc());
    const caches = createCaches(
      { maxEntries: config.cacheMaxEntries, ttlMs: config.cacheTtlMs },
      clock,
      bus,
    );
    const untracedRedis = config.redisUrl
      ? await connectRedisLimiter(config.redisUrl, config, log)
      : undefined;
    const redis =
      traced && untracedRedis ? traced.tracedRedisLimiter(untracedRedis, tracing) : untracedRedis;
    const events = new EventBuffer(
      db,
      {
        maxEvents: config.eventBufferSize,
        maxBytes: config.eventBufferBytes,
        flushIntervalMs: config.eventFlushIntervalMs,
        batchSize: 10_000,
        sliceSize: eventRowsPerStatement(db.engine),
      },
      log,
    );
    registerEventMetrics(metrics, events);
    // Only the embedded engine restarts (to cancel a statement); PostgreSQL has no such count.
    const restarts = (untracedDb as Partial<{ restarts(): number }>).restarts;
    if (typeof restarts === "function") {
      registerDatabaseRestarts(metrics, () => restarts.call(untracedDb));
    }
    const deps: Deps = {
      db,
      analyticsDb,
      clock,
      bus,
      caches,
      soleWorkspace: new SoleWorkspace(db, bus, log),
      log,
      config,
      metrics,
      limiter: redis
        ? new ResilientLimiter(
            redis,
            config.ratelimitFailureMode,
            () => metrics.ratelimitFailures.inc(),
            log,
          )
        : new MemoryLimiter(clock),
      credits: new CreditSpender(db, clock),
      events,
      analyticsSchema: await analyticsSchema(db),
      slots: {
        analytics: new WorkspaceSlots(config.analyticsMaxConcurrentPerWorkspace),
        migrateKeys: new WorkspaceSlots(config.migrateKeysMaxConcurrentPerWorkspace),
      },
    };
    const keeper = opts.onRootKeyCreated
      ? { afterCommit: opts.onRootKeyCreated }
      : rootKeyKeeper(
          rootKeyDestination(process.stdout.isTTY === true, config.bootstrapRootKeyFile),
          log,
        );
    const boot = await bootstrap(
      { ...deps, keyHashing: config.keyHashing },
      config.rootKey,
      log,
      keeper.beforeCommit,
    );
    deps.environmentRootKey = boot.environmentRootKey;
    if (boot.createdSecret) keeper.afterCommit?.(boot.createdSecret);
    // Before listening: a workspace created meanwhile is seen when the listening starts.
    await deps.soleWorkspace.load();
    await bus.start(db);
    events.start();
    const retention = scheduleRetention(
      db,
      clock,
      {
        eventDays: config.eventRetentionDays,
        creditLedgerDays: config.creditLedgerRetentionDays,
        consoleSessionIdleMs: config.consoleSessionIdleS * 1000,
        webhookDeliveryDays: config.webhookDeliveryRetentionDays,
      },
      log,
    );
    const reservationSweep = scheduleReservationSweep(db, clock, config.reservationTtlS, log);
    const started = startWebhooks(deps);
    webhooks = started;
    deps.webhooks = started;
    deps.ratelimitNotices = started.ratelimitNotices;

    const readiness = new Readiness(
      [
        databaseCheck(db, (await loadMigrations()).length),
        // Probes ping the limiter's own client: a probe every second is not a traced call.
        ...(untracedRedis ? [redisCheck(untracedRedis)] : []),
      ],
      { timeoutMs: config.readyTimeoutMs, cacheMs: config.readyCacheMs, log },
    );
    // The first report, before any probe or gRPC health status reads it.
    await readiness.report();
    const services = createServices(deps);
    const interceptors = [
      ...(traced ? [traced.procedureSpans(tracing)] : []),
      requestContextInterceptor(log, metrics, config.docsUrl),
      authenticateInterceptor(deps),
      validateInterceptor(),
    ];
    const shutdown = new AbortController();
    // Every in-flight Connect call listens on this signal; there is no leak to warn about.
    setMaxListeners(0, shutdown.signal);
    const doorOptions = { services, interceptors, maxBodyBytes: config.maxBodyBytes };
    const gateway = createGateway({
      services,
      interceptors,
      keyHeader: config.gatewayKeyHeader,
      docsUrl: config.docsUrl,
      log,
      clock,
    });
    const handler = createRouter({
      json: createJsonDoor({ ...doorOptions, docsUrl: config.docsUrl, log, metrics }),
      connect: createConnectDoor({ ...doorOptions, shutdownSignal: shutdown.signal }),
      pages: createPages(openApiDocument),
      console: consoleRoutes(createConsoleSessionRoutes(deps), createConsoleFiles()),
      health: healthRoutes(readiness),
      secretScanning: secretScanningDoor(deps),
      gateway: createForwardAuth(gateway, config.trustedProxies),
    });
    const limits = connectionLimits(config);
    const listener = await listen(
      handler,
      config.port,
      config.host,
      limits,
      connectionCounters(metrics, "main"),
    );
    const grpcDoor =
      config.grpcPort === undefined
        ? undefined
        : await startGrpcDoor({
            ...doorOptions,
            log,
            port: config.grpcPort,
            host: config.host,
            limits,
            counters: connectionCounters(metrics, "grpc"),
            readiness,
            gateway,
          });
    const admin =
      opts.serveAdmin === false
        ? undefined
        : await listen(
            createAdminHandler(metrics.registry, readiness),
            config.adminPort,
            config.adminHost,
            limits,
            connectionCounters(metrics, "admin"),
          );
    // Without the admin port this is not yet the whole server: "latchkey listening" is the
    // line that says so (its primary writes it), and tools wait for it.
    log.info(
      {
        port: listener.port,
        grpcPort: grpcDoor?.port,
        adminPort: admin?.port,
        adminHost: admin ? config.adminHost : undefined,
        engine: db.engine,
      },
      admin ? "latchkey listening" : "listening, without the admin port",
    );

    let stopping: Promise<void> | undefined;
    return {
      port: listener.port,
      grpcPort: grpcDoor?.port,
      adminPort: admin?.port,
      adminUrl: admin ? adminUrlOf(config.adminHost, admin.port) : undefined,
      readiness,
      url: `http://127.0.0.1:${listener.port}`,
      deps,
      metrics,
      webhooks: started,
      inflight: () => listener.inflight(),
      stop() {
        // Readiness goes off first: probes answer 503 and gRPC health watchers hear
        // NOT_SERVING while the connections drain.
        readiness.stop();
        stopping ??= (async () => {
          await Promise.all([
            listener.drain(config.shutdownTimeoutMs),
            grpcDoor?.drain(config.shutdownTimeoutMs),
          ]);
          shutdown.abort(new Error("server stopped"));
          retention.stop();
          await reservationSweep.stop();
          await started.stop();
          await events.stop(config.shutdownTimeoutMs);
          await deps.limiter.close();
          await bus.stop();
          await admin?.drain(config.shutdownTimeoutMs);
          await closeAnalyticsDb();
          if (ownsDb) await db.close();
          log.info("latchkey stopped");
          if (ownsTracing) await tracing?.shutdown(config.shutdownTimeoutMs);
        })();
        return stopping;
      },
    };
  } catch (err) {
    await webhooks?.stop().catch(() => {});
    await closeAnalyticsDb().catch(() => {});
    if (ownsDb) await db.close().catch(() => {});
    if (ownsTracing) await tracing?.shutdown(config.shutdownTimeoutMs).catch(() => {});
    throw err;
  }
}
