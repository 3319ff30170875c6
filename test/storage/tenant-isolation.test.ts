import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Queryable } from "../../src/storage/db.js";
import { currentEngine } from "../harness/engine.js";
import { waitingOnLocks } from "../harness/locks.js";
import { startServer, type TestServer } from "../harness/server.js";

// One tenant must not take what every tenant shares: the database's connections and time.
// Lock waits stand in for long statements: they hold a connection without burning CPU, and
// they end exactly when the test says so.

/** Polls `check` until it is true; fails after a generous deadline. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** `p`, or a failure once the generous deadline has passed without an answer. */
function answered<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer before the deadline`)), 15_000);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Runs `text` in a transaction of a connection of its own and keeps it open until released. */
async function holding(url: string, text: string, params: string[] = []) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  let release = () => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  let locked = () => {};
  const isLocked = new Promise<void>((r) => {
    locked = r;
  });
  const done = sql.begin(async (tx) => {
    await tx.unsafe(text, params);
    locked();
    await released;
  });
  await Promise.race([isLocked, done]);
  return async () => {
    release();
    await done;
    await sql.end();
  };
}

const MONTHLY = "select count(*) as n from key_verifications_per_month_v1";

describe.skipIf(currentEngine() !== "postgres")("the PostgreSQL pools", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({
      config: {
        databasePoolSize: 10,
        analyticsPoolSize: 10,
        analyticsMaxConcurrentPerWorkspace: 10,
        analyticsTimeoutMs: 60_000,
      },
    });
  });
  afterAll(() => s?.stop());

  it("keeps key procedures answering while analytics holds as many connections as the main pool has", async () => {
    const { key, apiId } = await s.seed.key();
    const release = await holding(
      s.databaseUrl as string,
      "lock table verifications_per_month in access exclusive mode",
    );
    let analyticsDone = 0;
    const queries = Array.from({ length: 10 }, () =>
      s.call("json", "analytics.getVerifications", { query: MONTHLY }).finally(() => {
        analyticsDone++;
      }),
    );
    try {
      await until(async () => (await waitingOnLocks(s, "%latchkey_row%")) === 10, "10 queries");
      const created = await answered(s.call("json", "keys.createKey", { apiId }), "createKey");
      const verified = await answered(s.call("json", "keys.verifyKey", { key }), "verifyKey");
      expect(created.status).toBe(200);
      expect(verified.data.valid).toBe(true);
      // Both answered while every analytics query still waited.
      expect(analyticsDone).toBe(0);
    } finally {
      await release();
    }
    for (const res of await Promise.all(queries)) expect(res.status).toBe(200);
  });
});

describe.skipIf(currentEngine() !== "postgres")("the analytics cap per workspace", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({
      config: {
        analyticsPoolSize: 3,
        analyticsMaxConcurrentPerWorkspace: 2,
        analyticsTimeoutMs: 60_000,
      },
    });
  });
  afterAll(() => s?.stop());

  it("answers 429 to a third concurrent query of one workspace while another workspace's query runs", async () => {
    const other = await s.seed.rootKey(["*.*.*"], await s.seed.workspace());
    const release = await holding(
      s.databaseUrl as string,
      "lock table verifications_per_month in access exclusive mode",
    );
    const run = (auth?: string) =>
      s.call("json", "analytics.getVerifications", { query: MONTHLY }, auth);
    const first = [run(), run()];
    let othersQuery: ReturnType<typeof run> | undefined;
    try {
      await until(async () => (await waitingOnLocks(s, "%latchkey_row%")) === 2, "2 queries");
      const third = await answered(run(), "the third query");
      expect(third.status).toBe(429);
      expect(third.error?.code).toBe("err:svc:too_many_requests:query_quota_exceeded");
      expect(third.error?.detail).toContain("retry");
      othersQuery = run(other);
      await until(async () => (await waitingOnLocks(s, "%latchkey_row%")) === 3, "the other one");
    } finally {
      await release();
    }
    for (const res of await Promise.all([...first, othersQuery])) expect(res?.status).toBe(200);
    // The slots are given back: the workspace may query again.
    expect((await run()).status).toBe(200);
  });
});

describe.skipIf(currentEngine() !== "postgres")("the statement timeout", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ config: { statementTimeoutMs: 300 } });
  });
  afterAll(() => s?.stop());

  it("answers 503 when a statement outlasts STATEMENT_TIMEOUT_MS, and changes nothing", async () => {
    const { keyId } = await s.seed.key({ name: "before" });
    const release = await holding(
      s.databaseUrl as string,
      "select id from keys where id = $1 for update",
      [keyId],
    );
    let res: Awaited<ReturnType<TestServer["call"]>>;
    try {
      res = await answered(s.call("json", "keys.updateKey", { keyId, name: "after" }), "updateKey");
    } finally {
      await release();
    }
    expect(res.status).toBe(503);
    expect(res.error?.code).toBe("err:svc:application:service_unavailable");
    const got = await s.call("json", "keys.getKey", { keyId });
    expect(got.data.name).toBe("before");
    expect((await s.call("json", "keys.updateKey", { keyId, name: "after" })).status).toBe(200);
  });
});

describe.skipIf(currentEngine() !== "postgres")("the migrateKeys cap per workspace", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s?.stop());

  const body = (apiId: string, n: number) => ({
    migrationId: "m_cap",
    apiId,
    keys: [{ hash: `${"cd".repeat(31)}${String(n).padStart(2, "0")}`, permissions: ["a.b.c"] }],
  });

  it("answers 429 to a second concurrent migration of one workspace while another workspace's runs", async () => {
    const apiId = await s.seed.api();
    const ws = await s.seed.workspace();
    const other = await s.seed.rootKey(["*.*.*"], ws);
    const otherApi = await s.seed.api(ws);
    const release = await holding(s.databaseUrl as string, "lock table keys in share mode");
    let first: ReturnType<TestServer["call"]> | undefined;
    let others: ReturnType<TestServer["call"]> | undefined;
    try {
      first = s.call("json", "keys.migrateKeys", body(apiId, 1));
      await until(async () => (await waitingOnLocks(s, "%insert into keys%")) === 1, "the first");
      const second = await answered(
        s.call("json", "keys.migrateKeys", body(apiId, 2)),
        "the second migration",
      );
      expect(second.status).toBe(429);
      expect(second.error?.code).toBe("err:svc:too_many_requests:workspace_rate_limited");
      others = s.call("json", "keys.migrateKeys", body(otherApi, 3), other);
      await until(async () => (await waitingOnLocks(s, "%insert into keys%")) === 2, "the other");
    } finally {
      await release();
    }
    expect((await first)?.status).toBe(200);
    expect((await others)?.status).toBe(200);
    expect((await s.call("json", "keys.migrateKeys", body(apiId, 4))).status).toBe(200);
  });
});

describe("the heaviest migrateKeys", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s?.stop());

  it("writes 1,000 permissions per key in a few statements, not one per grant", async () => {
    const apiId = await s.seed.api();
    const permissions = Array.from({ length: 1000 }, (_, i) => `perm.${i}`);
    const keys = Array.from({ length: 10 }, (_, i) => ({
      hash: `${"ab".repeat(31)}${String(i).padStart(2, "0")}`,
      permissions,
      externalId: `user_${i}`,
      ratelimits: [{ name: "requests", limit: 10, duration: 60_000 }],
    }));
    const db = s.app.deps.db;
    const transaction = db.transaction;
    let statements = 0;
    // Counts what the procedure's transaction sends; the statements themselves run unchanged.
    db.transaction = ((fn: (tx: Queryable) => Promise<unknown>) =>
      transaction.call(db, (tx) => {
        const counted: Queryable = {
          query: (text, params, options) => {
            statements++;
            return tx.query(text, params, options);
          },
          exec: (script) => tx.exec(script),
          copyCsv: (target, csv) => tx.copyCsv(target, csv),
        };
        return fn(counted);
      })) as typeof db.transaction;
    try {
      const res = await s.call("json", "keys.migrateKeys", { migrationId: "m_big", apiId, keys });
      expect(res.error).toBeUndefined();
      expect(res.status).toBe(200);
      expect(res.data.migrated).toHaveLength(10);
    } finally {
      db.transaction = transaction;
    }
    // 10,000 grants and about as many audit records: a slice of rows per statement.
    expect(statements).toBeLessThan(200);
    const grants = await s.db.query<{ n: number }>(
      "select count(*)::int as n from keys_permissions kp join keys k on k.id = kp.key_id where k.api_id = $1",
      [apiId],
    );
    expect(grants[0]?.n).toBe(10_000);
    const audits = await s.db.query<{ n: number }>(
      "select count(*)::int as n from audit_logs where event = 'authorization.connect_permission_and_key'",
    );
    expect(audits[0]?.n).toBe(10_000);
  });
});
