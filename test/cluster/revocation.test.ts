import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rig } from "./rig.js";

/** How long B and C may keep accepting a revoked key before the test fails. */
const DEADLINE_MS = 10_000;
let rig: Rig;
beforeAll(async () => {
  rig = await Rig.start();
});
afterAll(() => rig?.stop());

/**
 * Verifies `key` on nodes 1 and 2 continuously until both reject it (or the deadline passes);
 * returns when each first rejected, in ms after `since`.
 */
async function untilRejected(key: string, since: number): Promise<number[]> {
  const seen: number[] = [];
  await Promise.all(
    [1, 2].map(async (node) => {
      const deadline = Date.now() + DEADLINE_MS;
      for (let i = 0; i < 1_000_000 && Date.now() < deadline; i++) {
        const a = await rig.call("keys.verifyKey", { key }, { node, auth: null });
        expect(a.status).toBe(200);
        if (!a.body.data.valid) {
          seen[node - 1] = performance.now() - since;
          return;
        }
      }
    }),
  );
  return seen;
}

describe("a key revoked on node A stops verifying on B and C", () => {
  it.each([
    [
      "disabled",
      (keyId: string) => rig.ok("keys.updateKey", { keyId, enabled: false }, { node: 0 }),
    ],
    ["deleted", (keyId: string) => rig.ok("keys.deleteKey", { keyId }, { node: 0 })],
    [
      "expired",
      (keyId: string) =>
        rig.ok("keys.updateKey", { keyId, expires: Date.now() + 300 }, { node: 0 }),
    ],
  ])("%s", async (what, revoke) => {
    const { apiId } = await rig.ok("apis.createApi", { name: `revoke-${what}` });
    const { key, keyId } = await rig.ok("keys.createKey", { apiId });
    // B and C have the key cached as valid before the change.
    for (const node of [1, 2]) {
      const a = await rig.call("keys.verifyKey", { key }, { node, auth: null });
      expect(a.body.data.valid).toBe(true);
    }
    const since = performance.now();
    await revoke(keyId);
    const latencies = await untilRejected(key, since);
    console.log(
      `${what}: rejected on B after ${latencies[0]?.toFixed(1)} ms, C after ${latencies[1]?.toFixed(1)} ms`,
    );
    expect(latencies).toHaveLength(2);
    expect(latencies.every((ms) => ms !== undefined)).toBe(true);
  });
});
