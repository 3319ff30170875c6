import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseCheck } from "../../src/health/checks.js";
import { ReadinessFailure } from "../../src/health/readiness.js";
import type { Db } from "../../src/storage/db.js";
import { loadMigrations } from "../../src/storage/migrate.js";
import { askReady, type HealthClient, healthClient, readyWhen } from "../harness/health.js";
import { useServer } from "../harness/server.js";

// The health endpoints (admin port and main port), gRPC health on the gRPC port, and the
// admin port's /metrics, against one server whose database a test can make hang. The
// graceful shutdown, which needs a server of its own, is in operations.test.ts.

/** A database whose queries wait, while `hang()` holds, until `release()`. */
function hangable() {
  let hanging = false;
  let held: (() => void)[] = [];
  let migrationReads = 0;
  return {
    wrap: (db: Db): Db =>
      new Proxy(db, {
        get(target, prop) {
          if (prop !== "query") {
            const value = Reflect.get(target, prop);
            return typeof value === "function" ? value.bind(target) : value;
          }
          return async (...args: Parameters<Db["query"]>) => {
            if (hanging) {
              if (args[0].includes("schema_migrations")) migrationReads++;
              await new Promise<void>((resolve) => held.push(resolve));
            }
            return target.query(...args);
          };
        },
      }),
    hang() {
      hanging = true;
      migrationReads = 0;
    },
    release() {
      hanging = false;
      for (const resume of held) resume();
      held = [];
    },
    /** The readiness probe's reads of the migrations table made while hanging. */
    migrationReads: () => migrationReads,
  };
}

const database = hangable();
const s = useServer({
  config: { readyTimeoutMs: 200, readyCacheMs: 0 },
  wrapDb: database.wrap,
});
let health: HealthClient;
beforeAll(() => {
  health = healthClient(s.app.grpcPort as number);
});
afterAll(() => {
  database.release();
  health.close();
});

describe("the admin port", () => {
  it("serves /metrics, which the main port no longer answers", async () => {
    expect((await s.raw("/metrics")).status).toBe(404);
    const metrics = await s.admin("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(/^latchkey_process_cpu_seconds_total /m);
  });

  it("counts calls and latency per procedure, door and status", async () => {
    await s.call("json", "apis.createApi", { name: "metered" });
    await s.call("grpc", "apis.getApi", { apiId: "api_missing" });
    await s.call("json", "apis.nope" as string, {}).catch(() => undefined);
    const text = (await s.admin("/metrics")).text;
    expect(text).toMatch(
      /latchkey_request_duration_seconds_count\{procedure="apis.createApi",door="json",status="200"\} 1/,
    );
    expect(text).toMatch(
      /latchkey_request_duration_seconds_count\{procedure="apis.getApi",door="grpc",status="404"\} 1/,
    );
    expect(text).toMatch(
      /latchkey_request_duration_seconds_bucket\{le="0.005",procedure="apis.createApi"/,
    );
  });

  it("answers 404 to other paths and 405 to other methods", async () => {
    const other = await s.admin("/v2/liveness");
    expect(other.status).toBe(404);
    expect(JSON.parse(other.text).error).toContain("/metrics");
    const post = await fetch(`${s.adminUrl}/health/ready`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect((await fetch(`${s.adminUrl}/metrics`, { method: "PUT" })).status).toBe(405);
  });
});

describe("/health/live and /health/ready", () => {
  it("answer 200 on the admin port and on the main port, never cached", async () => {
    for (const base of [s.adminUrl, s.url]) {
      const live = await fetch(`${base}/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: "live" });
      const ready = await fetch(`${base}/health/ready?probe=1`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get("content-type")).toBe("application/json");
      expect(ready.headers.get("cache-control")).toBe("no-store");
      expect(await ready.json()).toEqual({ status: "ready" });
      const head = await fetch(`${base}/health/ready`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
    }
  });

  it("names the migrations when the schema is behind this Latchkey", async () => {
    const known = (await loadMigrations()).length;
    await expect(databaseCheck(s.db, known).probe()).resolves.toBeUndefined();
    const behind = databaseCheck(s.db, known + 1).probe();
    await expect(behind).rejects.toBeInstanceOf(ReadinessFailure);
    await expect(behind).rejects.toMatchObject({ parts: ["migrations"] });
  });
});

describe("gRPC health", () => {
  it("is SERVING for the whole server and for each service, NOT_FOUND for another name", async () => {
    expect(await health.check("")).toBe("SERVING");
    expect(await health.check("latchkey.v2.KeysService")).toBe("SERVING");
    expect(await health.check("latchkey.v2.LivenessService")).toBe("SERVING");
    await expect(health.check("latchkey.v2.Nope")).rejects.toMatchObject({ code: 5 });
  });
});

describe("a database that hangs", () => {
  it("makes ready 503 naming it within the timeout, with one probe held, and recovers", async () => {
    const watch = health.watch("");
    await watch.until("SERVING");
    database.hang();
    const answers = await Promise.all([
      askReady(s.adminUrl),
      askReady(s.adminUrl),
      askReady(s.url),
    ]);
    for (const answer of answers) {
      expect(answer).toEqual({ status: 503, body: { status: "not ready", failing: ["database"] } });
    }
    expect(await health.check("")).toBe("NOT_SERVING");
    expect(await health.check("latchkey.v2.KeysService")).toBe("NOT_SERVING");
    await watch.until("NOT_SERVING");
    // Asked again and again (and polled for the watch), a hung database holds one probe.
    expect((await askReady(s.adminUrl)).status).toBe(503);
    expect(database.migrationReads()).toBe(1);

    const seen = watch.statuses.length;
    database.release();
    expect((await readyWhen(s.adminUrl, 200)).body).toEqual({ status: "ready" });
    await watch.until("SERVING", seen);
    expect(watch.statuses).toEqual(["SERVING", "NOT_SERVING", "SERVING"]);
    expect(await health.check("")).toBe("SERVING");
    watch.cancel();
    expect(await watch.ended).toBe(1);
  });
});
