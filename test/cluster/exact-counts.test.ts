import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rig } from "./rig.js";

const CALLS = 3000;
let rig: Rig;
beforeAll(async () => {
  rig = await Rig.start();
});
afterAll(() => rig?.stop());

describe("exact counts across three nodes", () => {
  it(`spends exactly 1000 credits for ${CALLS} concurrent verifications, then none`, async () => {
    const { apiId } = await rig.ok("apis.createApi", { name: "credits" });
    const { key, keyId } = await rig.ok("keys.createKey", { apiId, credits: { remaining: 1000 } });
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: CALLS }, () => rig.call("keys.verifyKey", { key }, { auth: null })),
    );
    const ms = performance.now() - started;
    const codes = new Map<string, number>();
    for (const a of answers) {
      expect(a.status).toBe(200);
      codes.set(a.body.data.code, (codes.get(a.body.data.code) ?? 0) + 1);
    }
    console.log(
      `credits: ${CALLS} verifications in ${ms.toFixed(0)} ms:`,
      Object.fromEntries(codes),
    );
    expect(codes.get("VALID")).toBe(1000);
    expect(codes.get("USAGE_EXCEEDED")).toBe(CALLS - 1000);
    for (let node = 0; node < 3; node++) {
      const after = await rig.call("keys.verifyKey", { key }, { node, auth: null });
      expect(after.body.data).toMatchObject({ valid: false, code: "USAGE_EXCEEDED", credits: 0 });
    }
    expect((await rig.ok("keys.getKey", { keyId })).credits.remaining).toBe(0);
  });

  it(`admits exactly 100 of ${CALLS} concurrent ratelimit.limit calls (limit 100 per hour)`, async () => {
    const body = { namespace: "rig.exact", identifier: "one", limit: 100, duration: 3_600_000 };
    await rig.ok("ratelimit.limit", { ...body, cost: 0 });
    const answers = await Promise.all(
      Array.from({ length: CALLS }, () => rig.call("ratelimit.limit", body)),
    );
    // Windows are epoch-aligned hours: group by window so a run across the hour stays exact.
    const windows = new Map<number, { calls: number; admitted: number }>();
    for (const a of answers) {
      expect(a.status).toBe(200);
      const w = windows.get(a.body.data.reset) ?? { calls: 0, admitted: 0 };
      w.calls++;
      if (a.body.data.success) w.admitted++;
      windows.set(a.body.data.reset, w);
    }
    const failures = await Promise.all(
      [0, 1, 2].map((node) => rig.metric(node, "latchkey_ratelimit_backend_failures_total")),
    );
    console.log(
      "rate limit windows:",
      [...windows.values()],
      "backend failures per node:",
      failures,
    );
    expect(failures).toEqual([0, 0, 0]);
    for (const w of windows.values()) expect(w.admitted).toBe(Math.min(100, w.calls));
  });
});
