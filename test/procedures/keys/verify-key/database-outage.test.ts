import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { type App, startApp } from "../../../../src/app.js";
import { openPostgres } from "../../../../src/storage/postgres.js";
import { createTestDatabase, type TestDatabase } from "../../../harness/database.js";
import { currentEngine } from "../../../harness/engine.js";
import { loopbackConfig } from "../../../harness/server.js";
import { startTcpProxy, type TcpProxy } from "../../../harness/tcp-proxy.js";
import { type Api, refusal } from "../../../harness/typed.js";
import { statusOf, typedApiAt, verifyWith } from "./calls.js";

// keys.verifyKey while the database goes away under a running server (its connections pass
// through a proxy the test cuts): answers that need it are 503, never a made-up verdict, and
// service resumes by itself once the database is back.
describe.skipIf(currentEngine() !== "postgres")("keys.verifyKey during a PostgreSQL outage", () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let app: App;
  /** As the root key, and without one. */
  let api: Api;
  let anonymous: Api;
  const rootKey = "outage_root_key_0123456789";

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    const target = new URL(database.url as string);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(database.url as string);
    viaProxy.port = String(proxy.port);
    const db = openPostgres({ url: viaProxy.toString(), connectTimeoutSeconds: 2 });
    app = await startApp({
      config: loopbackConfig({ rootKey, cacheTtlMs: 30_000 }),
      db,
      log: pino({ level: "silent" }),
    });
    api = typedApiAt(app.url, rootKey);
    anonymous = typedApiAt(app.url, null);
  });
  afterAll(async () => {
    proxy.restore();
    await app.stop();
    await app.deps.db.close();
    await proxy.close();
    await database.drop();
  });

  it("answers 503 for uncached keys, credits and writes during the outage, and recovers", async () => {
    const apiId = (await api.apis.createApi({ name: "outage" })).data?.apiId as string;
    const newKey = async (credits?: { remaining: bigint }) =>
      (await api.keys.createKey({ apiId, credits })).data?.key as string;
    const cached = await newKey();
    const uncached = await newKey();
    const withCredits = await newKey({ remaining: 10n });
    const verify = (key: string) => verifyWith(anonymous, { key });
    expect((await verify(cached)).code).toBe(VerifyKeyCode.VALID);
    expect((await verify(withCredits)).code).toBe(VerifyKeyCode.VALID);

    proxy.cut();
    const down = await refusal(anonymous.keys.verifyKey({ key: uncached }));
    expect(down).toMatchObject({
      status: 503,
      errorCode: "err:svc:application:service_unavailable",
    });
    expect((await refusal(anonymous.keys.verifyKey({ key: withCredits }))).status).toBe(503);
    expect((await refusal(api.apis.createApi({ name: "during outage" }))).status).toBe(503);
    // A cached key without credits needs no database.
    expect((await verify(cached)).code).toBe(VerifyKeyCode.VALID);

    proxy.restore();
    const started = performance.now();
    const deadline = Date.now() + 10_000;
    let status = 503;
    while (status !== 200 && Date.now() < deadline)
      status = await statusOf(anonymous.keys.verifyKey({ key: uncached }));
    console.log(
      `verification recovered ${(performance.now() - started).toFixed(0)} ms after the database came back`,
    );
    expect(status).toBe(200);
    expect(await verify(withCredits)).toMatchObject({ code: VerifyKeyCode.VALID, credits: 8n });
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
