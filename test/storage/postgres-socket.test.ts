import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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
    const noDelay = vi.spyOn(net.Socket.prototype, "setNoDelay");
    const db = openPostgres({ url: postgresUrl as string, max: 1 });
    try {
      expect(await db.query<{ one: number }>("select 1 as one")).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
    expect(noDelay).toHaveBeenCalledWith(true);
  });

  it("reject a query whose connection fails on the spot (EMFILE), and recover, without crashing", async () => {
    // A child process with at most 64 descriptors fills them, asks for a query from a timer's
    // callback, frees them and asks again. Node finds EMFILE while it starts the connect and
    // emits it on the next tick; a socket that connected at once, before postgres.js listened,
    // made that an uncaught exception.
    const dir = mkdtempSync(join(tmpdir(), "latchkey-emfile-"));
    const script = join(dir, "emfile.mjs");
    const module = resolve("dist/src/storage/postgres.js");
    writeFileSync(
      script,
      `import { closeSync, openSync } from "node:fs";
       import { openPostgres } from ${JSON.stringify(module)};
       const db = openPostgres({ url: ${JSON.stringify(postgresUrl)}, max: 1 });
       const ask = () => db.query("select 1 as one").then(() => "ok", (e) => e.name + ": " + e.cause?.code);
       const fds = [];
       const fill = () => { try { for (;;) fds.push(openSync("/dev/null", "r")); } catch {} };
       fill();
       // Filled again in the callback itself: Node may close a descriptor of its own in
       // between, and the query would then find one free.
       const full = await new Promise((r) => setImmediate(() => { fill(); r(ask()); }));
       for (const fd of fds) closeSync(fd);
       console.log(JSON.stringify({ full, freed: await ask() }));
       await db.close();`,
    );
    try {
      const out = await new Promise<string>((done, fail) =>
        execFile(
          "sh",
          ["-c", 'ulimit -n 64 && exec "$0" "$1"', process.execPath, script],
          (err, stdout, stderr) =>
            err ? fail(new Error(`${err.message}\n${stderr}`)) : done(stdout),
        ),
      );
      // A 503 for the caller (DbUnavailableError), not a 500.
      expect(JSON.parse(out)).toEqual({ full: "DbUnavailableError: EMFILE", freed: "ok" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("write a burst of 5,000 events in one flush", async () => {
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
    // Printed, not asserted (bench/scenarios/event-writer.ts measures it): with Nagle's algorithm on,
    // this took ~4.6 s (50 COPYs of ~90 ms).
    console.log(
      `5,000 events in 100-row COPYs on PostgreSQL: ${Math.round(performance.now() - started)} ms`,
    );
    const [row] = await database.db.query<{ n: number }>(
      "select count(*)::int as n from key_verifications where workspace_id = 'ws_burst'",
    );
    expect(row?.n).toBe(5_000);
  });
});
