import { describe, expect, it } from "vitest";
import { acrossRestart } from "../../../harness/restart.js";

// An idempotency record lives in the database: a server started again on the same database
// (PGlite's data directory opened again, or the same PostgreSQL database) answers a repeat
// with the first outcome and charges nothing.

describe("an idempotency record across a restart", () => {
  it("answers the repeat from the database after the server started again", async () => {
    let body: unknown;
    let first: unknown;
    let keyId = "";
    await acrossRestart(
      "idempotency",
      async ({ ok }) => {
        const { apiId } = await ok("apis.createApi", { name: "restart" });
        const created = await ok("keys.createKey", { apiId, credits: { remaining: 10 } });
        keyId = created.keyId;
        body = { key: created.key, credits: { cost: 2 }, idempotencyKey: "restart-1" };
        first = await ok("keys.verifyKey", body);
        expect(first).toMatchObject({ code: "VALID", credits: 8 });
      },
      async ({ ok }) => {
        expect(await ok("keys.verifyKey", body)).toEqual(first);
        expect((await ok("keys.getKey", { keyId })).credits.remaining).toBe(8);
      },
    );
  });
});
