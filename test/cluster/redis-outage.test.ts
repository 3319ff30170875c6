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
    // Counting resumes without a restart. Each node reconnects on its own schedule, and a
    // fail-open node answers 200 while it is still cut off, so a node counts as back only
    // when a decision on it adds no backend failure (and the fail-closed one answers 200).
    const deadline = Date.now() + RECOVERY_DEADLINE_MS;
    for (const node of [0, 1, 2]) {
      let back = false;
      for (let i = 0; i < 100_000 && Date.now() < deadline && !back; i++) {
        const before = await rig.metric(node, "latchkey_ratelimit_backend_failures_total");
        const probe = await rig.call("ratelimit.limit", { ...body, cost: 0 }, { node });
        const after = await rig.metric(node, "latchkey_ratelimit_backend_failures_total");
        back = probe.status === 200 && after === before;
        if (!back) await new Promise((r) => setImmediate(r));
      }
      expect(back, `node ${node} decides through Redis again`).toBe(true);
    }
    console.log(
      `every node decided through Redis again ${(performance.now() - started).toFixed(0)} ms after it started`,
    );
    // Redis kept nothing (no persistence): exactly 5 of 20 calls across the nodes pass now.
    const fresh = { ...body, identifier: "after" };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => rig.call("ratelimit.limit", fresh)),
    );
    expect(answers.filter((a) => a.body.data.success)).toHaveLength(5);
  });
});
