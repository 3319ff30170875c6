import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { EventCounts } from "./analytics/event-buffer.js";
import { LabelledHistogram } from "./metrics-histogram.js";

/** The Prometheus metrics of one server, in a registry of its own. */
export interface Metrics {
  registry: Registry;
  /** Records one finished call. */
  observe(procedure: string, door: string, status: number, seconds: number): void;
  /** Counts one verification outcome (`latchkey_verifications_total{code}`). */
  verified(code: string): void;
  /**
   * Counts a verification that resolved to no workspace (an unknown key and no root key),
   * which is not stored (`latchkey_verifications_unattributed_total{outcome}`).
   */
  unattributed(outcome: string): void;
  invalidationsReceived: Counter;
  /** Decisions the rate limiter's backend (Redis) could not make. */
  ratelimitFailures: Counter;
  /** Connections closed as they were accepted because their port was full, by listener. */
  connectionsRefused: Counter<"listener">;
  /** Connections open, by listener. */
  connectionsOpen: Gauge<"listener">;
  /** Console sign-in attempts by outcome: `ok`, `refused` (401 or 400) or `limited` (429). */
  consoleSignIns: Counter<"outcome">;
  /** Webhook delivery attempts by outcome: delivered, failed (answered non-2xx), error. */
  webhookAttempts: Counter<"outcome">;
  /** Webhook endpoints this node disabled for failing. */
  webhookEndpointsDisabled: Counter;
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Creates the registry with request count and latency per procedure, door and status. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "latchkey_" });
  const duration = new LabelledHistogram(
    "latchkey_request_duration_seconds",
    "Latency of calls by procedure, door and HTTP status.",
    ["procedure", "door", "status"] as const,
    DURATION_BUCKETS,
    registry,
  );
  // Outcomes are counted here and handed to prom-client when it collects: a labelled inc()
  // validates and hashes its labels on every call, which the verification path cannot afford.
  const pending = new Map<string, number>();
  new Counter({
    name: "latchkey_verifications_total",
    help: "Key verifications by outcome code.",
    labelNames: ["code"] as const,
    registers: [registry],
    collect() {
      for (const [code, n] of pending) if (n > 0) this.inc({ code }, n);
      pending.clear();
    },
  });
  // Counted like the outcomes above: the path of an anonymous flood must stay as cheap.
  const unattributed = new Map<string, number>();
  new Counter({
    name: "latchkey_verifications_unattributed_total",
    help: "Verifications that resolved to no workspace (unknown key, no root key): counted here, not stored.",
    labelNames: ["outcome"] as const,
    registers: [registry],
    collect() {
      for (const [outcome, n] of unattributed) if (n > 0) this.inc({ outcome }, n);
      unattributed.clear();
    },
  });
  const ratelimitFailures = new Counter({
    name: "latchkey_ratelimit_backend_failures_total",
    help: "Rate-limit decisions or refunds the backend (Redis) failed; RATELIMIT_FAILURE_MODE decided the answer.",
    registers: [registry],
  });
  const invalidationsReceived = new Counter({
    name: "latchkey_invalidations_received_total",
    help: "Invalidation notifications received from other nodes.",
    registers: [registry],
  });
  const connectionsRefused = new Counter({
    name: "latchkey_connections_refused_total",
    help: "Connections closed as they were accepted because their port held MAX_CONNECTIONS.",
    labelNames: ["listener"] as const,
    registers: [registry],
  });
  const connectionsOpen = new Gauge({
    name: "latchkey_connections_open",
    help: "Connections open, by listening port (main, grpc or admin).",
    labelNames: ["listener"] as const,
    registers: [registry],
  });
  const consoleSignIns = new Counter({
    name: "latchkey_console_sign_ins_total",
    help: "Web console sign-in attempts by outcome (ok, refused, limited): a refused one is counted here, not stored.",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: "latchkey_webhook_attempts_total",
    help: "Webhook delivery attempts by outcome: delivered (2xx), failed (another answer), error (no answer).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const webhookEndpointsDisabled = new Counter({
    name: "latchkey_webhook_endpoints_disabled_total",
    help: "Webhook endpoints disabled for failing every attempt for WEBHOOK_DISABLE_AFTER_MS.",
    registers: [registry],
  });
  return {
    registry,
    consoleSignIns,
    webhookAttempts,
    webhookEndpointsDisabled,
    invalidationsReceived,
    ratelimitFailures,
    connectionsRefused,
    connectionsOpen,
    observe: (procedure, door, status, seconds) =>
      duration.observe(procedure, door, String(status), seconds),
    verified(code) {
      pending.set(code, (pending.get(code) ?? 0) + 1);
    },
    unattributed(outcome) {
      unattributed.set(outcome, (unattributed.get(outcome) ?? 0) + 1);
    },
  };
}

/**
 * A counter whose value is read from `read` when scraped: a count kept elsewhere that only
 * ever grows, handed to prom-client as the increase since the previous scrape.
 */
function counterReading(metrics: Metrics, name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers: [metrics.registry],
    collect() {
      const now = read();
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}

/**
 * Exposes the counters of the verification event buffer: every event offered is either
 * recorded or dropped (`recorded + dropped` = verifications), and recorded ones are
 * buffered until written.
 */
export function registerEventMetrics(
  metrics: Metrics,
  source: { stats(): EventCounts & { buffered: number } },
): void {
  counterReading(
    metrics,
    "latchkey_events_recorded_total",
    "Verification events accepted into the buffer.",
    () => source.stats().recorded,
  );
  counterReading(
    metrics,
    "latchkey_events_dropped_total",
    "Verification events dropped: the buffer was full, or they were still unwritten when the server stopped.",
    () => source.stats().dropped,
  );
  counterReading(
    metrics,
    "latchkey_events_written_total",
    "Verification events written to the database.",
    () => source.stats().written,
  );
  new Gauge({
    name: "latchkey_events_buffered",
    help: "Verification events waiting to be written.",
    registers: [metrics.registry],
    collect() {
      this.set(source.stats().buffered);
    },
  });
  counterReading(
    metrics,
    "latchkey_events_flush_failures_total",
    "Flushes that failed (the events stay buffered).",
    () => source.stats().failedFlushes,
  );
  counterReading(
    metrics,
    "latchkey_analytics_events_rejected_total",
    "Analytics events the database refused, each found alone by splitting its batch and dropped (also in latchkey_events_dropped_total).",
    () => source.stats().rejected,
  );
}

/**
 * Exposes how often the embedded database's thread was ended and started again: a statement
 * cancelled at its timeout (a hostile analytics query), or a thread that died. Each restart
 * makes the database's callers wait for the files to be reopened, so a rising count tells an
 * operator to look at who sends such queries.
 */
export function registerDatabaseRestarts(metrics: Metrics, restarts: () => number): void {
  counterReading(
    metrics,
    "latchkey_embedded_database_restarts_total",
    "Restarts of the embedded database's thread since the server started (a statement cancelled at its timeout, or a thread that died).",
    restarts,
  );
}
