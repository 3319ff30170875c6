import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/metrics.js";

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
