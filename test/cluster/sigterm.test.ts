import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rig } from "./rig.js";

let rig: Rig;
beforeAll(async () => {
  rig = await Rig.start();
});
afterAll(() => rig?.stop());

describe("SIGTERM under load", () => {
  it("completes in-flight requests and writes an event for every verification it answered", async () => {
    const { apiId } = await rig.ok("apis.createApi", { name: "sigterm" });
    const { key, keyId } = await rig.ok("keys.createKey", { apiId });
    let answered = 0;
    let refused = 0;
    let failedInFlight = 0;
    let stopping = false;
    // 20 concurrent callers hammer node 0 only; SIGTERM arrives mid-load.
    const caller = async () => {
      for (let i = 0; i < 400; i++) {
        const a = await rig.call("keys.verifyKey", { key }, { node: 0, auth: null });
        if (a.status === 200) answered++;
        else if (a.status === 0 && stopping) {
          refused++; // the listener has closed: a new request is refused, not lost
          return;
        } else failedInFlight++;
      }
    };
    const load = Promise.all(Array.from({ length: 20 }, caller));
    // Let some load through, then stop the node.
    const deadline = Date.now() + 30_000;
    while (answered < 500 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    stopping = true;
    const exitCode = await rig.stopNode(0, "SIGTERM");
    await load;
    console.log(
      `answered ${answered}, refused after close ${refused}, failed in flight ${failedInFlight}`,
    );
    expect(exitCode).toBe(0);
    expect(failedInFlight).toBe(0);
    // Every answered verification became an event (none dropped at this load).
    const [{ n }] = await rig.ok(
      "analytics.getVerifications",
      {
        query: `select sum(count)::int as n from key_verifications_per_hour_v1 where key_id = '${keyId}'`,
      },
      { node: 1 },
    );
    console.log(`events written ${n} for ${answered} answers`);
    expect(n).toBe(answered);
  });
});
