import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../harness/database.js";
import { currentEngine, redisUrl } from "../harness/engine.js";
import { startTcpProxy } from "../harness/tcp-proxy.js";
import { latchkey, type Serving, startLatchkey } from "./bin.js";

const engine = currentEngine();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "latchkey-startup-"));
  dirs.push(d);
  return d;
}

/** A loopback port nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const BASE = {
  PORT: "0",
  GRPC_PORT: "off",
  ADMIN_PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "info",
};
const RETRIES = /is not reachable yet; retrying/g;

/** Polls the output until `pattern` appears in it, or the process ends, or 60 s pass. */
async function printed(s: Serving, pattern: RegExp): Promise<boolean> {
  const until = performance.now() + 180_000;
  while (performance.now() < until) {
    if (pattern.test(s.stdout())) return true;
    if (s.child.exitCode !== null) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

describe.skipIf(engine !== "pglite")(
  "a start that cannot go on says why in one line",
  { timeout: 300_000 },
  () => {
    it.each([
      [{ PORT: "abc" }, "PORT=abc: must be an integer from 0 to 65535"],
      [{ GRPC_PORT: "nine" }, "GRPC_PORT=nine"],
      [
        { REQUEST_HEADERS_TIMEOUT_MS: "40000" },
        "REQUEST_HEADERS_TIMEOUT_MS=40000: must not exceed REQUEST_TIMEOUT_MS",
      ],
      [{ KEY_HASH_PEPPER: "short" }, "KEY_HASH_PEPPER: a pepper must be"],
    ])("%j: exit 2", (env, message) => {
      const r = latchkey(["serve"], { ...BASE, DATA_DIR: dataDir(), ...env });
      expect(r.code).toBe(2);
      expect(r.stderr.trimEnd().split("\n")).toEqual([
        expect.stringContaining(`latchkey: ${message}`),
      ]);
      expect(r.stdout).toBe("");
    });

    it.each([
      "postgres://latchkey:s3cret-pw@db.internal:notaport/latchkey",
      "postgres://latchkey:s3cret-pw@[db.internal/latchkey",
      "postgress://latchkey:s3cret-pw@db.internal/latchkey",
      "latchkey:s3cret-pw@db.internal/latchkey",
    ])("a malformed DATABASE_URL (%s) never shows its password", (url) => {
      for (const r of [
        latchkey(["serve"], { ...BASE, DATABASE_URL: url }),
        latchkey(["serve", "--database-url", url], BASE),
        latchkey(["root-key", "list"], { DATABASE_URL: url }),
      ]) {
        expect(r.code).toBe(2);
        expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
        expect(r.stderr).toMatch(/^latchkey: (DATABASE_URL|--database-url): not a PostgreSQL URL/);
        expect(r.stdout + r.stderr).not.toContain("s3cret");
      }
    });

    it("a port in use: exit 1, one line naming it", async () => {
      const taken = net.createServer();
      await new Promise<void>((r) => taken.listen(0, "127.0.0.1", () => r()));
      try {
        const port = String((taken.address() as net.AddressInfo).port);
        const r = latchkey(["serve", "--port", port], { ...BASE, DATA_DIR: dataDir() });
        expect(r.code).toBe(1);
        expect(r.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(/EADDRINUSE.*:\d+/)]);
      } finally {
        await new Promise((r) => taken.close(r));
      }
    });

    it("PostgreSQL that never comes: retried and logged for STARTUP_WAIT_S, then exit 1", async () => {
      const port = await closedPort();
      const url = `postgres://latchkey:s3cret-pw@127.0.0.1:${port}/latchkey`;
      const r = latchkey(["serve"], { ...BASE, DATABASE_URL: url, STARTUP_WAIT_S: "2" });
      console.log(`gave up after ${Math.round(r.ms)} ms`);
      expect(r.code).toBe(1);
      expect(r.ms).toBeGreaterThanOrEqual(2_000);
      expect(r.stdout.match(RETRIES)?.length ?? 0).toBeGreaterThanOrEqual(3);
      expect(r.stderr.trimEnd().split("\n")).toEqual([
        expect.stringContaining(
          `latchkey: PostgreSQL at 127.0.0.1:${port}/latchkey is not reachable after 2 s`,
        ),
      ]);
      expect(r.stdout + r.stderr).not.toContain("s3cret");
    });

    it("the admin commands wait too, logging on stderr: stdout stays the answer", async () => {
      const port = await closedPort();
      const url = `postgres://u@127.0.0.1:${port}/latchkey`;
      const r = latchkey(["root-key", "list"], { DATABASE_URL: url, STARTUP_WAIT_S: "1" });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(RETRIES);
      expect(r.stderr.trimEnd().split("\n").at(-1)).toMatch(
        /^latchkey: PostgreSQL at .* not reachable/,
      );
    });
  },
);

describe.skipIf(engine !== "postgres")(
  "PostgreSQL coming up after Latchkey",
  { timeout: 300_000 },
  () => {
    it("is waited for: the start goes on once it answers", async () => {
      const database = await createTestDatabase("postgres");
      const target = new URL(database.url as string);
      const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
      proxy.cut(); // PostgreSQL is "down": connections are reset
      const url = new URL(target);
      url.host = `127.0.0.1:${proxy.port}`;
      const serving = startLatchkey(["serve"], {
        ...BASE,
        DATABASE_URL: url.toString(),
        ROOT_KEY: "startup_root_key_0123456789",
      });
      try {
        expect(await printed(serving, RETRIES), serving.stderr()).toBe(true);
        proxy.restore();
        expect(await serving.listening(), serving.stdout() + serving.stderr()).toBe(true);
        expect(serving.stdout()).toMatch(
          /PostgreSQL at 127\.0\.0\.1:\d+\/latchkey_t_\w+ is reachable/,
        );
        expect(await serving.stop()).toBe(0);
      } finally {
        await serving.stop();
        await proxy.close();
        await database.drop();
      }
    });
  },
);

describe.skipIf(engine !== "pglite" || !redisUrl)(
  "Redis coming up after Latchkey",
  { timeout: 300_000 },
  () => {
    it("is waited for, each attempt logged, and rate limits count in it once up", async () => {
      const target = new URL(redisUrl as string);
      const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
      proxy.cut();
      const serving = startLatchkey(["serve"], {
        ...BASE,
        DATA_DIR: dataDir(),
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        ROOT_KEY: "startup_root_key_0123456789",
      });
      try {
        expect(await printed(serving, /Redis at 127\.0\.0\.1:\d+ is not reachable yet/)).toBe(true);
        proxy.restore();
        expect(await serving.listening(), serving.stdout()).toBe(true);
        expect(serving.stdout()).toMatch(/Redis at 127\.0\.0\.1:\d+ is reachable/);
        expect(serving.stdout()).not.toContain("RATELIMIT_FAILURE_MODE");
      } finally {
        await serving.stop();
        await proxy.close();
      }
    });

    it("still away after STARTUP_WAIT_S: serves, rate limits following RATELIMIT_FAILURE_MODE", async () => {
      const serving = startLatchkey(["serve"], {
        ...BASE,
        DATA_DIR: dataDir(),
        REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
        STARTUP_WAIT_S: "3",
        ROOT_KEY: "startup_root_key_0123456789",
      });
      try {
        expect(await serving.listening(), serving.stdout()).toBe(true);
        expect(serving.stdout()).toMatch(RETRIES);
        expect(serving.stdout()).toMatch(/rate limits follow RATELIMIT_FAILURE_MODE until it is/);
      } finally {
        await serving.stop();
      }
    });
  },
);
