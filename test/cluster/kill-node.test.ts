import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rig } from "./rig.js";

const ROUNDS = 150;
let rig: Rig;
beforeAll(async () => {
  rig = await Rig.start();
});
afterAll(() => rig?.stop());

describe("kill -9 of a node under mixed load", () => {
  it("loses no acknowledged create or credit decrement, and the other nodes keep serving", async () => {
    const { apiId } = await rig.ok("apis.createApi", { name: "kill" });
    const { key: creditKey, keyId: creditKeyId } = await rig.ok("keys.createKey", {
      apiId,
      credits: { remaining: 100_000 },
    });
    const acknowledged: string[] = [];
    let acknowledgedSpends = 0;
    let othersFailed = 0;
    let killed = false;
    // Three workers, one per node, each mixing create, update and verify-with-credits.
    const worker = async (node: number) => {
      for (let i = 0; i < ROUNDS; i++) {
        if (node === 0 && i === ROUNDS / 3 && !killed) {
          killed = true;
          void rig.stopNode(0, "SIGKILL");
        }
        const created = await rig.call(
          "keys.createKey",
          { apiId, name: `k${node}-${i}` },
          { node },
        );
        if (created.status === 200) {
          acknowledged.push(created.body.data.keyId);
          const updated = await rig.call(
            "keys.updateKey",
            { keyId: created.body.data.keyId, meta: { round: i } },
            { node },
          );
          if (node !== 0 && updated.status !== 200) othersFailed++;
        } else if (node !== 0) othersFailed++;
        const verified = await rig.call("keys.verifyKey", { key: creditKey }, { node, auth: null });
        if (verified.status === 200 && verified.body.data.code === "VALID") acknowledgedSpends++;
        else if (node !== 0) othersFailed++;
        if (node === 0 && verified.status === 0) return; // node 0 is gone
      }
    };
    await Promise.all([0, 1, 2].map(worker));
    console.log(
      `acknowledged creates ${acknowledged.length}, acknowledged spends ${acknowledgedSpends}, failures on the survivors ${othersFailed}`,
    );
    expect(killed).toBe(true);
    expect(othersFailed).toBe(0);
    // Every acknowledged create is there, from a surviving node.
    for (const keyId of acknowledged) {
      const got = await rig.call("keys.getKey", { keyId }, { node: 1 });
      expect(got.status, keyId).toBe(200);
    }
    // Every acknowledged decrement is in the balance (a spend the dead node made but never
    // acknowledged may be there too: never fewer, possibly more).
    const { credits } = await rig.ok("keys.getKey", { keyId: creditKeyId }, { node: 2 });
    expect(100_000 - credits.remaining).toBeGreaterThanOrEqual(acknowledgedSpends);
    console.log(`spent in storage ${100_000 - credits.remaining}`);
    // The killed node comes back and serves.
    await rig.restartNode(0);
    expect(
      (await rig.call("keys.verifyKey", { key: creditKey }, { node: 0, auth: null })).status,
    ).toBe(200);
  });
});
