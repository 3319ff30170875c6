import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, isUniqueViolation } from "../../src/storage/db.js";
import type { PgliteDb } from "../../src/storage/pglite.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";
import { startServer, type TestServer } from "../harness/server.js";

// The embedded database runs on its own thread: a long statement keeps that thread busy, not
// the server's, and one given a timeout is cancelled there (SQLSTATE 57014) without losing
// committed work. Every query here would take PGlite many seconds or hours.
const ENDLESS = "select count(*) from generate_series(1, 100000) a, generate_series(1, 100000) b";
/** Some seconds of PGlite work that ends (the ordering tests need it to end on any code). */
const LONG = "select count(*) from generate_series(1, 1500) a, generate_series(1, 1500) b";
/** Cross-joined VALUES: no table, no function, allowed by the analytics guard. */
const HOSTILE_ANALYTICS = `select count(*) from ${Array.from(
  { length: 7 },
  (_, i) => `(values (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) as v${i}(n)`,
).join(", ")}`;

/** The order in which promises settle, by label. */
function settleOrder(entries: Record<string, Promise<unknown>>): Promise<string[]> {
  const order: string[] = [];
  return Promise.all(
    Object.entries(entries).map(([label, p]) =>
      p.then(
        () => order.push(label),
        () => order.push(label),
      ),
    ),
  ).then(() => order);
}

describe.skipIf(currentEngine() !== "pglite")("the embedded database's thread", () => {
  let t: TestDatabase;
  let db: PgliteDb;
  beforeAll(async () => {
    t = await createTestDatabase("pglite");
    db = t.db as PgliteDb;
    await db.exec("create table kept (id int primary key, note text)");
    await db.query("insert into kept values (1, 'before')");
  });
  afterAll(() => t?.drop());

  it("cancels a statement past its timeout with 57014; queued work runs on the new thread", async () => {
    const got: string[] = [];
    let connects = 0;
    const unlisten = await db.listen(
      "isolation_test",
      (p) => got.push(p),
      () => connects++,
    );
    const cancelled = db.query(ENDLESS, [], { timeoutMs: 300 }).catch(errorCode);
    // Sent while the statement runs: none of them has started when it is cancelled.
    const queued = [
      db.query("insert into kept values (4, 'queued')"),
      db.transaction((tx) => tx.query("insert into kept values (5, 'queued tx')")),
      db.query("select id, note from kept order by id"),
    ];
    expect(await cancelled).toBe("57014");
    const results = await Promise.all(queued);
    expect(results[2]).toEqual([
      { id: 1, note: "before" },
      { id: 4, note: "queued" },
      { id: 5, note: "queued tx" },
    ]);
    // LISTEN is taken again on the new thread, and the subscriber told it reconnected.
    await db.query("select pg_notify('isolation_test', 'after restart')");
    await expect.poll(() => got, { timeout: 10_000 }).toEqual(["after restart"]);
    expect(connects).toBe(2);
    await unlisten();
  });

  it("rolls back the transaction of a cancelled statement; the next one works", async () => {
    const err = await db
      .transaction(async (tx) => {
        await tx.query("insert into kept values (2, 'lost')");
        await tx.query(ENDLESS, [], { timeoutMs: 300 });
      })
      .catch((e: unknown) => e);
    expect(errorCode(err)).toBe("57014");
    await db.transaction((tx) => tx.query("insert into kept values (3, 'after')"));
    expect(await db.query("select id from kept order by id")).toEqual([
      { id: 1 },
      { id: 3 },
      { id: 4 },
      { id: 5 },
    ]);
  });

  it("keeps SQLSTATEs of errors, copies CSV and dumps", async () => {
    const dup = await db.query("insert into kept values (1, 'again')").catch((e: unknown) => e);
    expect(isUniqueViolation(dup)).toBe(true);
    await db.copyCsv("kept (id, note)", new TextEncoder().encode("10,csv\n11,csv\n"));
    expect(await db.query("select count(*)::int as n from kept where note = 'csv'")).toEqual([
      { n: 2 },
    ]);
    expect((await db.dump()).size).toBeGreaterThan(0);
  });

  it("answers on the server's thread while a statement runs", async () => {
    const order = await settleOrder({
      statement: db.query(LONG),
      timer: new Promise((resolve) => setTimeout(resolve, 1)),
    });
    expect(order).toEqual(["timer", "statement"]);
  });
});

describe.skipIf(currentEngine() !== "pglite")("a noisy tenant on the embedded database", () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startServer({ config: { analyticsTimeoutMs: 500 } });
    key = (await s.seed.key()).key;
    await verify(); // cached from now on
  }, 120_000);
  afterAll(() => s?.stop());

  async function verify(): Promise<void> {
    const res = await s.call("json", "keys.verifyKey", { key }, null);
    expect(res.data?.valid).toBe(true);
  }

  it("a cached verification answers while a long statement runs", async () => {
    const order = await settleOrder({ statement: s.db.query(LONG), verify: verify() });
    expect(order).toEqual(["verify", "statement"]);
  });

  it("a cached verification answers while a large write runs", async () => {
    await s.db.exec("create table if not exists scratch (n int, pad text)");
    const write = s.db.exec(
      "insert into scratch select g, repeat('x', 200) from generate_series(1, 400000) g",
    );
    const order = await settleOrder({ write, verify: verify() });
    expect(order).toEqual(["verify", "write"]);
    await s.db.exec("drop table scratch");
  });

  it("stops a hostile analytics query at the analytics timeout; verifications go on", async () => {
    const hostile = s.call("json", "analytics.getVerifications", { query: HOSTILE_ANALYTICS });
    let settled = false;
    void hostile.finally(() => {
      settled = true;
    });
    let answeredMeanwhile = 0;
    while (!settled) {
      await verify();
      if (!settled) answeredMeanwhile++;
    }
    const res = await hostile;
    expect(res.status).toBe(422);
    expect(res.error?.code).toBe("err:svc:unprocessable_entity:query_execution_timeout");
    expect(answeredMeanwhile).toBeGreaterThan(0);
    // The cancellation restarted the database's thread, and an operator can see it.
    const metrics = (await s.admin("/metrics")).text;
    expect(metrics).toMatch(/^latchkey_embedded_database_restarts_total [1-9]/m);
    // The database goes on, with what it held.
    await verify();
    const created = await s.call("json", "keys.createKey", { apiId: await s.seed.api() });
    expect(created.status).toBe(200);
  });
});
