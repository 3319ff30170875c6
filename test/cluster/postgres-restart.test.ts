import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rig } from "./rig.js";

const RECOVERY_DEADLINE_MS = 30_000;
let rig: Rig;
beforeAll(async () => {
  rig = await Rig.start();
});
afterAll(() => rig?.stop());

describe("a PostgreSQL restart under load", () => {
  it("answers 503 (never valid:false) while it is down, and every node serves afterwards", async () => {
    const { apiId } = await rig.ok("apis.createApi", { name: "pg-restart" });
    const cached = await rig.ok("keys.createKey", { apiId });
    const uncached = await rig.ok("keys.createKey", { apiId });
    for (let node = 0; node < 3; node++)
      await rig.ok("keys.verifyKey", { key: cached.key }, { node });

    rig.stopPostgres();
    const outageStarted = performance.now();
    const statuses = new Map<string, number>();
    const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
    // Load during the outage: 5 callers per node at once, 20 rounds each.
    const caller = async (node: number) => {
      for (let round = 0; round < 20; round++) {
        const v = await rig.call("keys.verifyKey", { key: uncached.key }, { node, auth: null });
        count(`uncached verify ${v.status}`);
        expect(v.status).toBe(503);
        expect(v.body.error.type).toMatch(/\/application\/service_unavailable$/);
        const w = await rig.call("apis.createApi", { name: `down-${round}` }, { node });
        count(`write ${w.status}`);
        expect(w.status).toBe(503);
        const c = await rig.call("keys.verifyKey", { key: cached.key }, { node, auth: null });
        count(
          `cached verify ${c.status} ${c.body?.data?.code ?? c.body?.error?.type?.split("/").at(-1)}`,
        );
        // A cached key may still verify (no credits involved) or get 503; never a made-up false.
        if (c.status === 200) expect(c.body.data.valid).toBe(true);
        else expect(c.status).toBe(503);
      }
    };
    await Promise.all([0, 1, 2].flatMap((node) => Array.from({ length: 5 }, () => caller(node))));
    const calls = 20 * 3 * 3 * 5;
    console.log(
      `while PostgreSQL was down, ${calls} calls (15 at a time) took ${(performance.now() - outageStarted).toFixed(0)} ms:`,
      Object.fromEntries(statuses),
    );

    rig.startPostgres();
    const started = performance.now();
    for (let node = 0; node < 3; node++) {
      const deadline = Date.now() + RECOVERY_DEADLINE_MS;
      let status = 0;
      for (let i = 0; i < 100_000 && Date.now() < deadline && status !== 200; i++) {
        status = (await rig.call("apis.createApi", { name: `up-${node}` }, { node })).status;
        if (status !== 200) await new Promise((r) => setImmediate(r));
      }
      expect(status).toBe(200);
      const v = await rig.call("keys.verifyKey", { key: uncached.key }, { node, auth: null });
      expect(v.body.data.valid).toBe(true);
    }
    console.log(
      `all nodes served again ${(performance.now() - started).toFixed(0)} ms after the start`,
    );
  });
});
