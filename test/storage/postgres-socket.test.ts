import net from "node:net";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EventBuffer } from "../../src/analytics/event-buffer.js";
import { openPostgres } from "../../src/storage/postgres.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine, postgresUrl } from "../harness/engine.js";

let database: TestDatabase | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await database?.drop();
  database = undefined;
});

describe.skipIf(currentEngine() !== "postgres")("the PostgreSQL connections", () => {
  it("are opened with TCP_NODELAY", async () => {
    const connect = vi.spyOn(net, "connect");
    const db = openPostgres({ url: postgresUrl as string, max: 1 });
    try {
      expect(await db.query<{ one: number }>("select 1 as one")).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
    const u = new URL(postgresUrl as string);
    expect(connect).toHaveBeenCalledWith(
      expect.objectContaining({ host: u.hostname, noDelay: true }),
    );
  });

  it("write a burst of 5,000 events in one flush (COPY's last write is not held back)", async () => {
    database = await createTestDatabase("postgres");
    const options = {
      maxEvents: 10_000,
      maxBytes: 1 << 30,
      flushIntervalMs: 60_000,
      batchSize: 10_000,
      sliceSize: 100,
    };
    const buffer = new EventBuffer(database.db, options, pino({ level: "silent" }));
    const time = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 5_000; i++) {
      buffer.record({
        kind: "verification",
        time: time + i,
        workspaceId: "ws_burst",
        apiId: "api_burst",
        keyId: "key_burst",
        identityId: null,
        externalId: null,
        outcome: "VALID",
        tags: [],
        spentCredits: 0,
        requestId: `req_${i}`,
      });
    }
    const started = performance.now();
    expect(await buffer.flush()).toBe(true);
    // Printed, not asserted: with Nagle's algorithm on, this took ~4.6 s (50 COPYs of ~90 ms).
    console.log(
      `5,000 events in 100-row COPYs on PostgreSQL: ${Math.round(performance.now() - started)} ms`,
    );
    const [row] = await database.db.query<{ n: number }>(
      "select count(*)::int as n from key_verifications where workspace_id = 'ws_burst'",
    );
    expect(row?.n).toBe(5_000);
  });
});
