import { describe, expect, it } from "vitest";
import { acrossRestart } from "../../../harness/restart.js";

// A reservation lives in the database: a server started again on the same database (PGlite's
// data directory opened again, or the same PostgreSQL database) settles it, and a repeat of
// the verification that made it (same idempotencyKey) answers the same reservationId.

describe("a reservation across a restart", () => {
  it("is settled by the server started again", async () => {
    let body: unknown;
    let first: { reservationId: string; credits: number } | undefined;
    let keyId = "";
    await acrossRestart(
      "reservation",
      async ({ ok }) => {
        const { apiId } = await ok("apis.createApi", { name: "restart" });
        const created = await ok("keys.createKey", { apiId, credits: { remaining: 50 } });
        keyId = created.keyId;
        body = { key: created.key, credits: { reserve: 20 }, idempotencyKey: "hold-1" };
        first = await ok("keys.verifyKey", body);
        expect(first).toMatchObject({ code: "VALID", credits: 30 });
      },
      async ({ ok }) => {
        expect(await ok("keys.verifyKey", body)).toEqual(first);
        const reservationId = first?.reservationId;
        const settled = await ok("keys.settleCredits", { reservationId, used: 8 });
        expect(settled).toEqual({
          reservationId,
          reserved: 20,
          used: 8,
          refunded: 12,
          shortfall: 0,
          remaining: 42,
          expired: false,
        });
        expect((await ok("keys.getKey", { keyId })).credits.remaining).toBe(42);
      },
    );
  });
});
