import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

/** The Prometheus metrics of one server, in a registry of its own. */
export interface Metrics {
  registry: Registry;
  /** Records one finished call. */
  observe(procedure: string, door: string, status: number, seconds: number): void;
  invalidationsReceived: Counter;
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
