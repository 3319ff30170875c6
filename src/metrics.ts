import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { EventCounts } from "./analytics/event-buffer.js";

/** The Prometheus metrics of one server, in a registry of its own. */
export interface Metrics {
  registry: Registry;
  /** Records one finished call. */
  observe(procedure: string, door: string, status: number, seconds: number): void;
  invalidationsReceived: Counter;
  /** Verification outcomes by code. */
  verifications: Counter<"code">;
  /** Decisions the rate limiter's backend (Redis) could not make. */
  ratelimitFailures: Counter;
}

/** Creates the registry with request count and latency per procedure, door and status. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "latchkey_" });
  const duration = new Histogram({
    name: "latchkey_request_duration_seconds",
    help: "Latency of calls by procedure, door and HTTP status.",
    labelNames: ["procedure", "door", "status"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const verifications = new Counter({
    name: "latchkey_verifications_total",
    help: "Key verifications by outcome code.",
    labelNames: ["code"] as const,
    registers: [registry],
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
  // Children per label set, so the hot path skips prom-client's label hashing.
  const children = new Map<string, ReturnType<typeof duration.labels>>();
  return {
    registry,
    invalidationsReceived,
    verifications,
    ratelimitFailures,
    observe(procedure, door, status, seconds) {
      // The histogram's _count series is the request count per label set.
      const key = `${procedure} ${door} ${status}`;
      let child = children.get(key);
      if (!child) {
        child = duration.labels({ procedure, door, status: String(status) });
        children.set(key, child);
      }
      child.observe(seconds);
    },
  };
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
  const gauge = (
    name: string,
    help: string,
    pick: (s: EventCounts & { buffered: number }) => number,
  ) =>
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      collect() {
        this.set(pick(source.stats()));
      },
    });
  gauge(
    "latchkey_events_recorded",
    "Verification events accepted into the buffer.",
    (s) => s.recorded,
  );
  gauge(
    "latchkey_events_dropped",
    "Verification events dropped because the buffer was full.",
    (s) => s.dropped,
  );
  gauge(
    "latchkey_events_written",
    "Verification events written to the database.",
    (s) => s.written,
  );
  gauge(
    "latchkey_events_buffered",
    "Verification events waiting to be written.",
    (s) => s.buffered,
  );
  gauge(
    "latchkey_event_flush_failures",
    "Flushes that failed (the events stay buffered).",
    (s) => s.failedFlushes,
  );
}
