import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, startApp } from "../../../src/app.js";
import { loadConfig } from "../../../src/config.js";
import { openPostgres } from "../../../src/storage/postgres.js";
import { createTestDatabase, type TestDatabase } from "../../harness/database.js";
import { callJson } from "../../harness/doors.js";
import { currentEngine } from "../../harness/engine.js";
import { startTcpProxy, type TcpProxy } from "../../harness/tcp-proxy.js";

// The database goes away under a running server (its connections pass through a proxy the
// test cuts): answers that need it are 503, never a made-up verdict, and service resumes
// by itself once the database is back.
describe.skipIf(currentEngine() !== "postgres")("PostgreSQL outage", () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let app: App;
  const rootKey = "outage_root_key_0123456789";
  const call = (procedure: string, body: unknown, auth = true) =>
    callJson(app.url, procedure, body, auth ? { authorization: `Bearer ${rootKey}` } : {});

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    const target = new URL(database.url as string);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(database.url as string);
    viaProxy.port = String(proxy.port);
    const db = openPostgres({ url: viaProxy.toString(), connectTimeoutSeconds: 2 });
    app = await startApp({
      config: {
        ...loadConfig({}),
        port: 0,
        grpcPort: undefined,
        host: "127.0.0.1",
        rootKey,
        cacheTtlMs: 30_000,
      },
      db,
      log: pino({ level: "silent" }),
    });
  });
  afterAll(async () => {
    proxy.restore();
    await app.stop();
    await app.deps.db.close();
    await proxy.close();
    await database.drop();
  });

  it("answers 503 for uncached keys, credits and writes during the outage, and recovers", async () => {
    const apiId = (await call("apis.createApi", { name: "outage" })).data.apiId;
    const cached = (await call("keys.createKey", { apiId })).data.key;
    const uncached = (await call("keys.createKey", { apiId })).data.key;
    const withCredits = (await call("keys.createKey", { apiId, credits: { remaining: 10 } })).data
      .key;
    expect((await call("keys.verifyKey", { key: cached }, false)).data.code).toBe("VALID");
    expect((await call("keys.verifyKey", { key: withCredits }, false)).data.code).toBe("VALID");

    proxy.cut();
    const down = await call("keys.verifyKey", { key: uncached }, false);
    expect(down.status).toBe(503);
    expect(down.error?.code).toBe("err:svc:application:service_unavailable");
    const spend = await call("keys.verifyKey", { key: withCredits }, false);
    expect(spend.status).toBe(503);
    expect((await call("apis.createApi", { name: "during outage" })).status).toBe(503);
    // A cached key without credits needs no database.
    expect((await call("keys.verifyKey", { key: cached }, false)).data.code).toBe("VALID");

    proxy.restore();
    const started = performance.now();
    const deadline = Date.now() + 10_000;
    let status = 503;
    while (status !== 200 && Date.now() < deadline)
      status = (await call("keys.verifyKey", { key: uncached }, false)).status;
    console.log(
      `verification recovered ${(performance.now() - started).toFixed(0)} ms after the database came back`,
    );
    expect(status).toBe(200);
    expect((await call("keys.verifyKey", { key: withCredits }, false)).data).toMatchObject({
      code: "VALID",
      credits: 8,
    });
    const admin = openPostgres({ url: database.url as string, max: 1 });
    try {
      const rows = await admin.query<{ n: number }>(
        "select count(*)::int as n from apis where name = 'during outage'",
      );
      expect(rows[0]?.n).toBe(0);
    } finally {
      await admin.close();
    }
  });
});
