import { describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createTestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";
import { startTcpProxy } from "../harness/tcp-proxy.js";
import { appears, capturedLogger, TEST_START_ENV } from "./in-process.js";

describe.skipIf(currentEngine() !== "postgres")(
  "PostgreSQL coming up after Latchkey",
  { timeout: 300_000 },
  () => {
    it("is waited for, each attempt logged: the start goes on once it answers", async () => {
      const database = await createTestDatabase("postgres");
      const target = new URL(database.url as string);
      const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
      proxy.cut(); // PostgreSQL is "down": connections are reset
      const url = new URL(target);
      url.host = `127.0.0.1:${proxy.port}`;
      const { log, lines } = capturedLogger();
      const config = loadConfig({
        ...TEST_START_ENV,
        DATABASE_URL: url.toString(),
        ROOT_KEY: "startup_root_key_0123456789",
      });
      const starting = startApp({ config, log });
      try {
        expect(await appears(lines, /is not reachable yet; retrying/)).toBe(true);
        proxy.restore();
        const app = await starting;
        await app.stop();
        expect(lines()).toMatch(/PostgreSQL at 127\.0\.0\.1:\d+\/latchkey_t_\w+ is reachable/);
        expect(lines()).toMatch(/latchkey listening/);
      } finally {
        await starting.then((app) => app.stop()).catch(() => {});
        await proxy.close();
        await database.drop();
      }
    });
  },
);
