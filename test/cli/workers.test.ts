import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../../src/storage/postgres.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine, databaseUrl, postgresUrl, redisUrl } from "../harness/engine.js";
import { type Serving, startLatchkey } from "./bin.js";
import { cli, scratchDirs, TEST_START_ENV } from "./in-process.js";

// `latchkey serve` with WORKERS=2: two server processes share the ports through node:cluster,
// and every guarantee of one server holds across them. Each verification below goes over a
// connection of its own, so the cluster's round-robin spreads them over both workers.

describe("WORKERS above 1 refuses what it could not keep exact", () => {
  const dir = scratchDirs("latchkey-workers-");

  it("refuses the embedded database, which belongs to one process", async () => {
    const r = await cli(["serve"], { ...TEST_START_ENV, WORKERS: "2", DATA_DIR: dir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "latchkey: WORKERS=2 needs DATABASE_URL: the embedded database (DATA_DIR) belongs to one process; use PostgreSQL, or one worker\n",
    );
  });

  it("refuses rate limits counted in each worker (no REDIS_URL), naming the flag when given", async () => {
    // Refused before any connection: nothing listens on port 1.
    const env = { ...TEST_START_ENV, DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" };
    const r = await cli(["serve", "--workers", "3"], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "latchkey: --workers=3 needs REDIS_URL: without Redis each worker would count rate limits on its own, so they would no longer be exact; set REDIS_URL, or use one worker\n",
    );
  });
});

/** The `data` of a keys.verifyKey answer, as the /v2 door sends it. */
interface Verdict {
  code: string;
  ratelimits?: { reset: number }[];
}

/** keys.verifyKey over a new connection (no keep-alive): the cluster picks a worker for it. */
function verifyFresh(port: number, body: Record<string, unknown>): Promise<Verdict> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: "/v2/keys.verifyKey",
        method: "POST",
        agent: false,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          if (res.statusCode !== 200) reject(new Error(`${res.statusCode}: ${text}`));
          else resolve((JSON.parse(text) as { data: Verdict }).data);
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** `n` verifications at once, each over its own connection. */
function burst(port: number, n: number, body: Record<string, unknown>): Promise<Verdict[]> {
  return Promise.all(Array.from({ length: n }, () => verifyFresh(port, body)));
}

const count = (verdicts: Verdict[], code: string) => verdicts.filter((v) => v.code === code).length;

/** Polls `check` every 50 ms until it holds or `deadlineMs` passes. */
async function eventually(check: () => boolean | Promise<boolean>, deadlineMs = 60_000) {
  const until = performance.now() + deadlineMs;
  while (performance.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** The pids of the workers that said they listen, by worker number, in order of start. */
function workerPids(output: string): { worker: number; pid: number }[] {
  const re = /"pid":(\d+),"worker":(\d+),[^\n]*"msg":"listening, without the admin port"/g;
  return [...output.matchAll(re)].map((m) => ({ worker: Number(m[2]), pid: Number(m[1]) }));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(currentEngine() !== "postgres" || !redisUrl)(
  "latchkey serve with WORKERS=2 on PostgreSQL and Redis",
  { timeout: 180_000 },
  () => {
    const dir = scratchDirs("latchkey-workers-");
    let database: TestDatabase;
    let server: Serving;
    let port = 0;
    let adminUrl = "";
    let rootKey = "";
    /** keys.verifyKey calls this file made, every one answered. */
    let verifications = 0;

    /** A procedure through the /v2 door as the first root key. */
    async function call(procedure: string, body: unknown): Promise<Record<string, unknown>> {
      const res = await fetch(`http://127.0.0.1:${port}/v2/${procedure}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { data: Record<string, unknown> };
      if (res.status !== 200)
        throw new Error(`${procedure}: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    }

    async function newKey(apiId: string, body: Record<string, unknown> = {}) {
      const data = await call("keys.createKey", { apiId, ...body });
      return { keyId: data.keyId as string, key: data.key as string };
    }

    async function verifyBurst(n: number, body: Record<string, unknown>) {
      const verdicts = await burst(port, n, body);
      verifications += n;
      return verdicts;
    }

    beforeAll(async () => {
      database = await createTestDatabase("postgres");
      const rootKeyFile = join(dir(), "first-root-key");
      server = startLatchkey(["serve"], {
        DATABASE_URL: database.url as string,
        REDIS_URL: redisUrl as string,
        WORKERS: "2",
        PORT: "0",
        GRPC_PORT: "0",
        ADMIN_PORT: "0",
        HOST: "127.0.0.1",
        // One line per call, with its worker: which worker answered is in the log.
        LOG_LEVEL: "debug",
        // Longer than the test waits for a change to reach every worker: only an invalidation
        // can make the other worker's cached record go, not its expiry.
        CACHE_TTL_MS: "30000",
        SHUTDOWN_TIMEOUT_MS: "5000",
        // Every probe of the admin port asks the workers afresh: a killed worker shows at once.
        READY_CACHE_MS: "0",
        BOOTSTRAP_ROOT_KEY_FILE: rootKeyFile,
      });
      expect(await server.listening(), server.stderr() + server.stdout()).toBe(true);
      port = server.port() as number;
      const admin = /"adminPort":(\d+)[^\n]*"msg":"latchkey listening"/.exec(server.stdout());
      adminUrl = `http://127.0.0.1:${admin?.[1]}`;
      rootKey = readFileSync(rootKeyFile, "utf8").trim();
    }, 120_000);

    afterAll(async () => {
      await server?.stop();
      await database?.drop();
    });

    it("starts worker 1 first: the first root key is created once, then both serve one port", () => {
      const out = server.stdout();
      expect(out.match(/created the first root key/g)?.length).toBe(1);
      const workers = workerPids(out);
      expect(workers.map((w) => w.worker).sort()).toEqual([1, 2]);
      expect(new Set(workers.map((w) => w.pid)).size).toBe(2);
      // Worker 2 said nothing before worker 1 listened: it was started after.
      const firstListening = out.search(/"worker":1,[^\n]*"msg":"listening, without/);
      expect(firstListening).toBeGreaterThan(-1);
      expect(out.indexOf('"worker":2,')).toBeGreaterThan(firstListening);
      const ports = [...out.matchAll(/"port":(\d+)[^\n]*"msg":"listening, without/g)];
      expect(new Set(ports.map((m) => Number(m[1])))).toEqual(new Set([port]));
    });

    it("spends credits exactly: 200 concurrent verifications of a key with 40 credits, 40 VALID", async () => {
      const { apiId } = (await call("apis.createApi", { name: "credits" })) as { apiId: string };
      const k = await newKey(apiId, { credits: { remaining: 40 } });
      const verdicts = await verifyBurst(200, { key: k.key, apiId });
      expect(count(verdicts, "VALID")).toBe(40);
      expect(count(verdicts, "USAGE_EXCEEDED")).toBe(160);
    });

    it("rate-limits exactly through Redis: limit 25, 150 concurrent verifications, 25 admitted", async () => {
      const { apiId } = (await call("apis.createApi", { name: "limits" })) as { apiId: string };
      const k = await newKey(apiId, {
        ratelimits: [{ name: "requests", limit: 25, duration: 3_600_000, autoApply: true }],
      });
      const verdicts = await verifyBurst(150, { key: k.key, apiId });
      // Windows are epoch-aligned hours: a burst across the hour may admit 25 in each.
      const windows = new Map<number, { calls: number; valid: number }>();
      for (const v of verdicts) {
        expect(["VALID", "RATE_LIMITED"]).toContain(v.code);
        const reset = v.ratelimits?.[0]?.reset as number;
        const w = windows.get(reset) ?? { calls: 0, valid: 0 };
        w.calls++;
        if (v.code === "VALID") w.valid++;
        windows.set(reset, w);
      }
      for (const w of windows.values()) expect(w.valid).toBe(Math.min(25, w.calls));
    });

    it("invalidates every worker's cache: a disabled key stops verifying on both", async () => {
      const { apiId } = (await call("apis.createApi", { name: "revoke" })) as { apiId: string };
      const k = await newKey(apiId);
      const body = { key: k.key, apiId };
      // Warm both workers' caches (round-robin gives each about half of the connections).
      expect(count(await verifyBurst(40, body), "VALID")).toBe(40);
      await call("keys.updateKey", { keyId: k.keyId, enabled: false });
      const started = performance.now();
      let last: Verdict[] = [];
      const seen = await eventually(async () => {
        last = await verifyBurst(20, body);
        return count(last, "DISABLED") === 20;
      }, 15_000);
      expect(seen, JSON.stringify(last.map((v) => v.code))).toBe(true);
      console.log(`disabled on every worker after ${(performance.now() - started).toFixed(0)} ms`);
    });

    it("sums both workers' verifications on the primary's /metrics", async () => {
      // Both workers answered some of them (each call's debug line names its worker).
      const calls = [
        ...server.stdout().matchAll(/"worker":(\d+),[^\n]*"procedure":"keys.verifyKey"/g),
      ];
      const byWorker = new Map<string, number>();
      for (const m of calls) byWorker.set(m[1] as string, (byWorker.get(m[1] as string) ?? 0) + 1);
      expect([...byWorker.keys()].sort()).toEqual(["1", "2"]);
      const text = await (await fetch(`${adminUrl}/metrics`)).text();
      const counted = [...text.matchAll(/^latchkey_verifications_total\{code="\w+"\} (\d+)$/gm)];
      const sum = counted.reduce((total, m) => total + Number(m[1]), 0);
      console.log(`verifications by worker: ${JSON.stringify(Object.fromEntries(byWorker))}`);
      expect(sum).toBe(verifications);
      expect((await fetch(`${adminUrl}/health/ready`)).status).toBe(200);
    });

    it("replaces a killed worker, and the service keeps answering", async () => {
      const before = workerPids(server.stdout());
      const victim = before.find((w) => w.worker === 2)?.pid as number;
      process.kill(victim, "SIGKILL");
      // Until its replacement serves, the primary's readiness names the missing worker (the
      // replacement waits 250 ms, then takes a start's time).
      let ready: { status: number; body: unknown } = { status: 0, body: undefined };
      const unready = await eventually(async () => {
        const res = await fetch(`${adminUrl}/health/ready`);
        ready = { status: res.status, body: await res.json() };
        return res.status === 503;
      });
      expect(unready).toBe(true);
      expect(ready.body).toEqual({ status: "not ready", failing: ["worker 2"] });
      expect(await eventually(() => workerPids(server.stdout()).length > before.length)).toBe(true);
      expect(server.stdout()).toMatch(
        /"worker":2,"workerPid":\d+,"code":null,"signal":"SIGKILL","msg":"worker exited unexpectedly"/,
      );
      const replacement = workerPids(server.stdout()).at(-1);
      expect(replacement?.worker).toBe(2);
      expect(replacement?.pid).not.toBe(victim);
      const { apiId } = (await call("apis.createApi", { name: "after" })) as { apiId: string };
      const k = await newKey(apiId);
      expect(count(await verifyBurst(20, { key: k.key, apiId }), "VALID")).toBe(20);
      expect(
        await eventually(async () => (await fetch(`${adminUrl}/health/ready`)).status === 200),
      ).toBe(true);
    });

    it("stops every worker on SIGTERM, then exits 0 with no worker left", async () => {
      const pids = workerPids(server.stdout()).map((w) => w.pid);
      expect(await server.stop()).toBe(0);
      expect(pids.filter(alive)).toEqual([]);
      // Each worker that was still running stopped gracefully, then the primary.
      expect(server.stdout().match(/"msg":"latchkey stopped"/g)?.length).toBe(3);
    });

    it("gives up, non-zero with the reason, when a worker keeps failing to start", async () => {
      // A database of this test's own, really dropped below (the harness's databases go back
      // to a pool when a file lets them go); the server migrates it at start.
      const name = `latchkey_t_doomed_${process.pid}_${Date.now()}`;
      const admin = openPostgres({ url: postgresUrl as string, max: 1 });
      const drop = () => admin.exec(`drop database if exists ${name} with (force)`);
      await admin.exec(`create database ${name}`);
      const serving = startLatchkey(["serve"], {
        DATABASE_URL: databaseUrl(postgresUrl as string, name),
        REDIS_URL: redisUrl as string,
        WORKERS: "2",
        PORT: "0",
        GRPC_PORT: "off",
        ADMIN_PORT: "0",
        HOST: "127.0.0.1",
        ROOT_KEY: "workers_root_key_0123456789",
        SHUTDOWN_TIMEOUT_MS: "1000",
      });
      try {
        expect(await serving.listening(), serving.stdout()).toBe(true);
        // Without its database a new worker cannot start: a missing database is not waited for.
        await drop();
        const victim = workerPids(serving.stdout()).find((w) => w.worker === 2)?.pid as number;
        process.kill(victim, "SIGKILL");
        expect(await serving.exited(120_000)).toBe(1);
        expect(serving.stderr()).toMatch(
          /^latchkey: workers failed to start 5 times in a row; the last: .+\n$/,
        );
        expect(serving.stdout().match(/"msg":"worker failed to start"/g)?.length).toBe(5);
        console.log(serving.stderr().trim());
      } finally {
        await serving.stop();
        await drop();
        await admin.close();
      }
    });

    it("ends with the first worker's reason, non-zero, when it cannot start", async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
      const takenPort = (taken.address() as net.AddressInfo).port;
      try {
        const failing = startLatchkey(["serve"], {
          DATABASE_URL: database.url as string,
          REDIS_URL: redisUrl as string,
          WORKERS: "2",
          PORT: String(takenPort),
          GRPC_PORT: "off",
          ADMIN_PORT: "0",
          HOST: "127.0.0.1",
          ROOT_KEY: "workers_root_key_0123456789",
        });
        expect(await failing.exited(60_000)).toBe(1);
        expect(failing.stderr()).toBe(`latchkey: bind EADDRINUSE 127.0.0.1:${takenPort}\n`);
        // Worker 1 failed: worker 2 was never started.
        expect(failing.stdout()).not.toMatch(/"worker":2/);
      } finally {
        taken.close();
      }
    });
  },
);
