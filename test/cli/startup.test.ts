import net from "node:net";
import { describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { redisUrl } from "../harness/engine.js";
import { startTcpProxy } from "../harness/tcp-proxy.js";
import { appears, capturedLogger, cli, scratchDirs, TEST_START_ENV } from "./in-process.js";

// What a start does while its services are away, run in this process: the same code as the
// bin, with the output captured.

const dataDir = scratchDirs("latchkey-startup-");

/** A loopback port nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const RETRIES = /is not reachable yet; retrying/g;

describe("PostgreSQL that does not answer", () => {
  it("serve retries it for STARTUP_WAIT_S, logging each attempt, then exits 1 with one line", async () => {
    const port = await closedPort();
    const url = `postgres://latchkey:s3cret-pw@127.0.0.1:${port}/latchkey`;
    const handlers = process.listenerCount("SIGTERM");
    const r = await cli(["serve"], { ...TEST_START_ENV, DATABASE_URL: url, STARTUP_WAIT_S: "2" });
    expect(r.code).toBe(1);
    expect(r.stdout.match(RETRIES)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(r.stderr).toMatch(
      new RegExp(
        `^latchkey: PostgreSQL at 127\\.0\\.0\\.1:${port}/latchkey is not reachable after 2 s \\(\\d+ attempts; STARTUP_WAIT_S sets the wait\\): [^\\n]+\\n$`,
      ),
    );
    expect(r.stdout + r.stderr).not.toContain("s3cret");
    // The failed start let go of the signals it took.
    expect(process.listenerCount("SIGTERM")).toBe(handlers);
  });

  it("the admin commands wait too, logging on stderr: stdout stays the answer", async () => {
    const url = `postgres://u@127.0.0.1:${await closedPort()}/latchkey`;
    const r = await cli(["root-key", "list"], { DATABASE_URL: url, STARTUP_WAIT_S: "1" });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(RETRIES);
    expect(r.stderr.trimEnd().split("\n").at(-1)).toMatch(
      /^latchkey: PostgreSQL at .* not reachable/,
    );
  });
});

describe.skipIf(!redisUrl)("Redis coming up after Latchkey", { timeout: 300_000 }, () => {
  it("is waited for, each attempt logged, and rate limits count in it once up", async () => {
    const target = new URL(redisUrl as string);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    proxy.cut();
    const { log, lines } = capturedLogger();
    const config = loadConfig({
      ...TEST_START_ENV,
      DATA_DIR: dataDir(),
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      ROOT_KEY: "startup_root_key_0123456789",
    });
    const starting = startApp({ config, log });
    try {
      expect(await appears(lines, /Redis at 127\.0\.0\.1:\d+ is not reachable yet/)).toBe(true);
      proxy.restore();
      const app = await starting;
      await app.stop();
      expect(lines()).toMatch(/Redis at 127\.0\.0\.1:\d+ is reachable/);
      expect(lines()).not.toContain("RATELIMIT_FAILURE_MODE");
    } finally {
      await starting.then((app) => app.stop()).catch(() => {});
      await proxy.close();
    }
  });

  it("still away after STARTUP_WAIT_S: serves, rate limits following RATELIMIT_FAILURE_MODE", async () => {
    const { log, lines } = capturedLogger();
    const config = loadConfig({
      ...TEST_START_ENV,
      DATA_DIR: dataDir(),
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
      STARTUP_WAIT_S: "3",
      ROOT_KEY: "startup_root_key_0123456789",
    });
    const app = await startApp({ config, log });
    await app.stop();
    expect(lines()).toMatch(RETRIES);
    expect(lines()).toMatch(/rate limits follow RATELIMIT_FAILURE_MODE until it is/);
    expect(lines()).toMatch(/latchkey listening/);
  });
});
