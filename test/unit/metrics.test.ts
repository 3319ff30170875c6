import { AggregatorRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  createMetrics,
  registerDatabaseRestarts,
  registerEventMetrics,
} from "../../src/metrics.js";

/** A registry with every metric Latchkey registers, over counts the test sets. */
function everyMetric() {
  const m = createMetrics();
  const stats = {
    recorded: 0,
    dropped: 0,
    written: 0,
    failedFlushes: 0,
    rejected: 0,
    buffered: 0,
  };
  let restarts = 0;
  registerEventMetrics(m, { stats: () => stats });
  registerDatabaseRestarts(m, () => restarts);
  return {
    m,
    stats,
    restart: () => {
      restarts++;
    },
  };
}

describe("createMetrics", () => {
  it("counts verification outcomes by code, also across collections", async () => {
    const m = createMetrics();
    m.verified("VALID");
    m.verified("VALID");
    m.verified("RATE_LIMITED");
    let text = await m.registry.metrics();
    expect(text).toContain('latchkey_verifications_total{code="VALID"} 2');
    expect(text).toContain('latchkey_verifications_total{code="RATE_LIMITED"} 1');
    m.verified("VALID");
    text = await m.registry.metrics();
    expect(text).toContain('latchkey_verifications_total{code="VALID"} 3');
    expect(text).toContain('latchkey_verifications_total{code="RATE_LIMITED"} 1');
  });

  it("counts calls in the duration histogram", async () => {
    const m = createMetrics();
    m.observe("keys.verifyKey", "json", 200, 0.0004);
    m.observe("keys.verifyKey", "json", 200, 0.002);
    const text = await m.registry.metrics();
    expect(text).toContain(
      'latchkey_request_duration_seconds_count{procedure="keys.verifyKey",door="json",status="200"} 2',
    );
    expect(text).toContain(
      'latchkey_request_duration_seconds_bucket{le="0.001",procedure="keys.verifyKey",door="json",status="200"} 1',
    );
    expect(text).toContain("# TYPE latchkey_request_duration_seconds histogram");
  });

  it("answers the duration histogram in Prometheus' text form: cumulative buckets, +Inf, sum and count", async () => {
    const m = createMetrics();
    m.observe("keys.verifyKey", "json", 200, 0.0004);
    m.observe("keys.verifyKey", "json", 200, 0.003);
    m.observe("keys.verifyKey", "json", 200, 7);
    m.observe("apis.getApi", "grpc", 404, 0.001);
    const lines = (await m.registry.metrics())
      .split("\n")
      .filter((l) => l.startsWith("latchkey_request_duration_seconds"));
    const series = '{procedure="keys.verifyKey",door="json",status="200"}';
    const bucket = (le: string) =>
      `latchkey_request_duration_seconds_bucket{le="${le}",procedure="keys.verifyKey",door="json",status="200"}`;
    expect(lines).toContain(`${bucket("0.0005")} 1`);
    expect(lines).toContain(`${bucket("0.0025")} 1`);
    expect(lines).toContain(`${bucket("0.005")} 2`);
    expect(lines).toContain(`${bucket("2.5")} 2`);
    expect(lines).toContain(`${bucket("+Inf")} 3`);
    expect(lines).toContain(`latchkey_request_duration_seconds_sum${series} 7.0034`);
    expect(lines).toContain(`latchkey_request_duration_seconds_count${series} 3`);
    // A bound is inclusive, as Prometheus' `le` says.
    expect(lines).toContain(
      'latchkey_request_duration_seconds_bucket{le="0.001",procedure="apis.getApi",door="grpc",status="404"} 1',
    );
    // 12 bounds, +Inf, sum and count per label set.
    expect(lines).toHaveLength(2 * 15);
    m.registry.resetMetrics();
    expect(await m.registry.metrics()).not.toContain("latchkey_request_duration_seconds_count");
  });

  it("sums the duration histogram of several workers, as the workers' /metrics does", async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.observe("keys.verifyKey", "json", 200, 0.0004);
    b.observe("keys.verifyKey", "json", 200, 0.0004);
    b.observe("keys.verifyKey", "json", 200, 0.02);
    const text = await AggregatorRegistry.aggregate([
      await a.registry.getMetricsAsJSON(),
      await b.registry.getMetricsAsJSON(),
    ] as object[] as never).metrics();
    const series = 'procedure="keys.verifyKey",door="json",status="200"';
    expect(text).toContain(`latchkey_request_duration_seconds_count{${series}} 3`);
    expect(text).toContain(`latchkey_request_duration_seconds_bucket{le="0.0005",${series}} 2`);
    expect(text).toContain(`latchkey_request_duration_seconds_bucket{le="+Inf",${series}} 3`);
  });

  it("names every metric the Prometheus way: one latchkey_ prefix, _total counters, _seconds durations", async () => {
    const { m } = everyMetric();
    const metrics = await m.registry.getMetricsAsJSON();
    expect(metrics.length).toBeGreaterThan(10);
    for (const { name, type } of metrics) {
      expect(name, name).toMatch(/^latchkey_[a-z0-9_]+$/);
      expect(name, name).not.toMatch(/^latchkey_latchkey_/);
      expect(name, name).not.toMatch(/_(ms|milliseconds|millis)(_|$)/);
      if (String(type) === "counter") expect(name, name).toMatch(/_total$/);
      // prom-client's process metrics keep their standard names (a gauge of active handles
      // is nodejs_active_handles_total everywhere); our own gauges never end in _total.
      else if (!/^latchkey_(nodejs|process)_/.test(name)) expect(name, name).not.toMatch(/_total$/);
      if (String(type) === "histogram" && /duration|latency|lag/.test(name))
        expect(name, name).toMatch(/_seconds$/);
    }
  });

  it("counts what the event buffer and the embedded database counted, as counters", async () => {
    const { m, stats, restart } = everyMetric();
    Object.assign(stats, { recorded: 5, dropped: 2, written: 3, failedFlushes: 1, buffered: 2 });
    restart();
    let text = await m.registry.metrics();
    expect(text).toContain("# TYPE latchkey_events_recorded_total counter");
    expect(text).toContain("latchkey_events_recorded_total 5");
    expect(text).toContain("latchkey_events_dropped_total 2");
    expect(text).toContain("latchkey_events_written_total 3");
    expect(text).toContain("latchkey_events_flush_failures_total 1");
    expect(text).toContain("latchkey_events_buffered 2");
    expect(text).toContain("latchkey_embedded_database_restarts_total 1");
    stats.written = 5;
    stats.buffered = 0;
    text = await m.registry.metrics();
    expect(text).toContain("latchkey_events_written_total 5");
    expect(text).toContain("latchkey_events_buffered 0");
  });
});
