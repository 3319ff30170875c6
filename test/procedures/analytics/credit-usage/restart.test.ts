import { describe, expect, it } from "vitest";
import { acrossRestart } from "../../../harness/restart.js";

// The ledger lives in the database with the balances: a server started again on the same
// database reports what the first one recorded, and keeps recording.

const DAY = 86_400_000;

describe("a credit statement across a restart", () => {
  it("sums to the balances with moves before and after the restart", async () => {
    const start = Date.now() - DAY;
    const end = Date.now() + 2 * DAY;
    let keyId = "";
    let identityId = "";
    let body: unknown;
    let reservationId = "";
    await acrossRestart(
      "ledger",
      async ({ ok }) => {
        const { apiId } = await ok("apis.createApi", { name: "ledger" });
        const externalId = `ledger_${Date.now()}`;
        ({ identityId } = await ok("identities.createIdentity", {
          externalId,
          credits: { remaining: 500 },
        }));
        const created = await ok("keys.createKey", {
          apiId,
          externalId,
          credits: { remaining: 100 },
        });
        keyId = created.keyId;
        await Promise.all(
          Array.from({ length: 20 }, () =>
            ok("keys.verifyKey", { key: created.key, credits: { cost: 2 } }),
          ),
        );
        body = { key: created.key, credits: { reserve: 20 }, idempotencyKey: "ledger-hold" };
        reservationId = (await ok("keys.verifyKey", body)).reservationId;
        await ok("keys.updateCredits", { keyId, operation: "increment", value: 9 });
      },
      async ({ ok }) => {
        expect((await ok("keys.verifyKey", body)).reservationId).toBe(reservationId);
        await ok("keys.settleCredits", { reservationId, used: 3 });
        const statement = (subject: object) =>
          ok("analytics.getCreditUsage", { ...subject, start, end, granularity: "day" });
        const sum = (rows: { spent: number; refilled: number; adjusted: number }[]) =>
          rows.reduce((a, r) => a + r.refilled + r.adjusted - r.spent, 0);
        const key = await statement({ keyId });
        expect(key.length).toBeGreaterThanOrEqual(3);
        const balance = (await ok("keys.getKey", { keyId })).credits.remaining;
        expect(balance).toBe(100 - 40 - 3 + 9);
        expect(100 + sum(key)).toBe(balance);
        const pool = (await ok("identities.getIdentity", { identity: identityId })).credits
          .remaining;
        expect(500 + sum(await statement({ identityId }))).toBe(pool);
      },
    );
  });
});
