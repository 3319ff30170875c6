import fc from "fast-check";
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CallHistogram, createMetrics } from "../../src/metrics.js";

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** One observation: a label set and a duration, bounds themselves included. */
const observation = fc.record({
  procedure: fc.constantFrom("keys.verifyKey", "apis.getApi", "ratelimit.limit"),
  door: fc.constantFrom("json", "grpc", "connect"),
  status: fc.constantFrom(200, 400, 404, 503),
  seconds: fc.oneof(fc.constantFrom(...BOUNDS, 0, 3), fc.double({ min: 0, max: 5, noNaN: true })),
});

describe("CallHistogram", () => {
  it("exposes what prom-client's Histogram exposes for the same observations", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (calls) => {
        const ours = new Registry();
        const theirs = new Registry();
        const h = new CallHistogram("t_seconds", "Latency.", BOUNDS);
        ours.registerMetric(h as never);
        const reference = new Histogram({
          name: "t_seconds",
          help: "Latency.",
          labelNames: ["procedure", "door", "status"],
          buckets: BOUNDS,
          registers: [theirs],
        });
        for (const c of calls) {
          h.observe(c.procedure, c.door, c.status, c.seconds);
          reference.observe(
            { procedure: c.procedure, door: c.door, status: String(c.status) },
            c.seconds,
          );
        }
        // Same lines; the order of label sets may differ (prom-client orders by hash).
        const lines = async (r: Registry) => (await r.metrics()).split("\n").sort();
        expect(await lines(ours)).toEqual(await lines(theirs));
      }),
      { numRuns: 200 },
    );
  });
});

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
});
