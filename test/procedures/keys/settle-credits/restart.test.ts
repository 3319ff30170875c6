import pino from "pino";
import { describe, expect, it } from "vitest";
import { type App, startApp } from "../../../../src/app.js";
import { loadConfig } from "../../../../src/config.js";
import { scratchDirs, TEST_START_ENV } from "../../../cli/in-process.js";
import { createTestDatabase } from "../../../harness/database.js";
import { currentEngine } from "../../../harness/engine.js";

// A reservation lives in the database: a server started again on the same database (PGlite's
// data directory opened again, or the same PostgreSQL database) settles it, and a repeat of
// the verification that made it (same idempotencyKey) answers the same reservationId.

const ROOT_KEY = "reservation_restart_root_key_0123456789";
const dataDir = scratchDirs("latchkey-reservation-");

/** POST /v2/<procedure> with the root key; the parsed body (the test fails unless 200). */
async function ok(app: App, procedure: string, body: unknown) {
  const res = await fetch(`${app.url}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ROOT_KEY}` },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the test reads the answer's JSON as it comes
  const json: any = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.data;
}

describe("a reservation across a restart", () => {
  it("is settled by the server started again", async () => {
    const engine = currentEngine();
    const database = engine === "postgres" ? await createTestDatabase("postgres") : undefined;
    const env: Record<string, string> = {
      ...TEST_START_ENV,
      LOG_LEVEL: "silent",
      ROOT_KEY,
      ...(database?.url ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir() }),
    };
    const start = () => startApp({ config: loadConfig(env), log: pino({ level: "silent" }) });
    try {
      let app = await start();
      let body: unknown;
      let first: { reservationId: string; credits: number };
      let keyId: string;
      try {
        const { apiId } = await ok(app, "apis.createApi", { name: "restart" });
        const created = await ok(app, "keys.createKey", { apiId, credits: { remaining: 50 } });
        keyId = created.keyId;
        body = { key: created.key, credits: { reserve: 20 }, idempotencyKey: "hold-1" };
        first = await ok(app, "keys.verifyKey", body);
        expect(first).toMatchObject({ code: "VALID", credits: 30 });
      } finally {
        await app.stop();
      }
      app = await start();
      try {
        expect(await ok(app, "keys.verifyKey", body)).toEqual(first);
        const settled = await ok(app, "keys.settleCredits", {
          reservationId: first.reservationId,
          used: 8,
        });
        expect(settled).toEqual({
          reservationId: first.reservationId,
          reserved: 20,
          used: 8,
          refunded: 12,
          shortfall: 0,
          remaining: 42,
          expired: false,
        });
        expect((await ok(app, "keys.getKey", { keyId })).credits.remaining).toBe(42);
      } finally {
        await app.stop();
      }
    } finally {
      await database?.drop();
    }
  });
});
