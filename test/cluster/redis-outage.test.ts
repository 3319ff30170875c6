import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rig } from "./rig.js";

const RECOVERY_DEADLINE_MS = 30_000;
let rig: Rig;
beforeAll(async () => {
  // Nodes 0 and 1 fail open (the default); node 2 fails closed.
  rig = await Rig.start();
  await rig.stopNode(2);
  await rig.restartNode(2, { RATELIMIT_FAILURE_MODE: "closed" });
});
afterAll(() => rig?.stop());

describe("Redis stops and starts", () => {
  it("holds each node's failure mode while it is down and counts exactly again after", async () => {
    const body = { namespace: "rig.redis", identifier: "u", limit: 5, duration: 3_600_000 };
    await rig.ok("ratelimit.limit", { ...body, cost: 0 }, { node: 0 });

    rig.stopRedis();
    const open = await rig.call("ratelimit.limit", body, { node: 0 });
    expect(open.status).toBe(200);
    expect(open.body.data.success).toBe(true);
    const closed = await rig.call("ratelimit.limit", body, { node: 2 });
    expect(closed.status).toBe(503);
    expect(closed.body.error.type).toMatch(/\/application\/service_unavailable$/);
    const failures = await rig.metric(0, "latchkey_ratelimit_backend_failures_total");
    console.log(`failures counted on the fail-open node: ${failures}`);
    expect(failures).toBeGreaterThan(0);

    rig.startRedis();
    const started = performance.now();
    // Counting resumes without a restart: poll until the closed node decides again.
    const deadline = Date.now() + RECOVERY_DEADLINE_MS;
    let status = 0;
    for (let i = 0; i < 100_000 && Date.now() < deadline && status !== 200; i++) {
      status = (await rig.call("ratelimit.limit", { ...body, cost: 0 }, { node: 2 })).status;
      if (status !== 200) await new Promise((r) => setImmediate(r));
    }
    expect(status).toBe(200);
    console.log(
      `decisions resumed ${(performance.now() - started).toFixed(0)} ms after Redis started`,
    );
    // Redis kept nothing (no persistence): exactly 5 of 20 calls across the nodes pass now.
    const fresh = { ...body, identifier: "after" };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => rig.call("ratelimit.limit", fresh)),
    );
    expect(answers.filter((a) => a.body.data.success)).toHaveLength(5);
  });
});
