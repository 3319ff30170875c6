import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { EventBuffer, type EventBufferOptions } from "../../src/analytics/event-buffer.js";
import { type Db, DbUnavailableError } from "../../src/storage/db.js";
import type { AnalyticsEvent } from "../../src/storage/queries/events.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

const event = (i: number, time: number, tags = [`i=${i}`]): AnalyticsEvent => ({
  kind: "verification",
  time,
  workspaceId: "ws_test",
  apiId: "api_test",
  keyId: `key_${i}`,
  identityId: null,
  externalId: null,
  outcome: i % 2 === 0 ? "VALID" : "RATE_LIMITED",
  tags,
  spentCredits: i % 3,
  requestId: `req_${i}`,
});

/** A buffer over a fresh database of this run's engine (kept in `database` for cleanup). */
async function newBuffer(
  sizes: Omit<EventBufferOptions, "flushIntervalMs" | "maxBytes"> & {
    maxBytes?: number;
    flushIntervalMs?: number;
  },
) {
  database = await createTestDatabase(currentEngine());
  const { db } = database;
  const options = { maxBytes: 1 << 30, flushIntervalMs: 60_000, ...sizes };
  return { db, buffer: new EventBuffer(db, options, pino({ level: "silent" })) };
}

describe("the verification event buffer", () => {
  it("accounts for every event: recorded + dropped = offered, and writes what it recorded", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 250, batchSize: 100, sliceSize: 30 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 300; i++) buffer.record(event(i, day + i));
    expect(buffer.stats()).toMatchObject({ recorded: 250, dropped: 50, buffered: 250, written: 0 });
    await buffer.stop();
    expect(buffer.stats()).toMatchObject({ recorded: 250, dropped: 50, buffered: 0, written: 250 });
    const rows = await db.query<{ n: number; spent: number }>(
      "select count(*)::int as n, sum(spent_credits)::int as spent from key_verifications",
    );
    expect(rows[0]?.n).toBe(250);
    const parts = await db.query<{ name: string }>(
      "select tablename as name from pg_tables where tablename like 'key_verifications_%' order by 1",
    );
    expect(parts.map((p) => p.name)).toEqual(["key_verifications_20260505"]);
  });

  it("writes events of several days into their daily partitions", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 100, batchSize: 10, sliceSize: 10 });
    buffer.record(event(1, Date.parse("2026-05-05T23:59:59.999Z")));
    buffer.record(event(2, Date.parse("2026-05-06T00:00:00Z")));
    await buffer.flush();
    const rows = await db.query<{ p: string; n: number }>(
      "select tableoid::regclass::text as p, count(*)::int as n from key_verifications group by 1 order by 1",
    );
    expect(rows).toEqual([
      { p: "key_verifications_20260505", n: 1 },
      { p: "key_verifications_20260506", n: 1 },
    ]);
  });

  it("gives the event loop a turn between statements, so a flush never holds it for a whole batch", async () => {
    const { buffer } = await newBuffer({ maxEvents: 1000, batchSize: 1000, sliceSize: 10 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 500; i++) buffer.record(event(i, day + i));
    // A ticker on the check phase: it only advances when the event loop gets a turn.
    let turns = 0;
    let running = true;
    const tick = () => {
      turns++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    expect(await buffer.flush()).toBe(true);
    running = false;
    console.log(`${turns} turns of the event loop during a flush of 500 events in slices of 10`);
    // 50 raw-event statements and the rollups' statements, each followed by a turn.
    expect(turns).toBeGreaterThanOrEqual(50);
    expect(buffer.stats()).toMatchObject({ written: 500, buffered: 0 });
  });

  it("spreads a timer's write over the spread time: its statements leave at intervals, not back to back", async () => {
    const { buffer, db } = await newBuffer({
      maxEvents: 1000,
      batchSize: 1000,
      sliceSize: 10,
      flushIntervalMs: 100,
      spreadMs: 2_000,
    });
    const day = Date.parse("2026-05-05T10:00:00Z");
    // A first pass creates the day's partitions (statements outside the spread write).
    buffer.record(event(0, day));
    expect(await buffer.flush()).toBe(true);
    const sent = statementTimes(db);
    // One key and outcome: one rollup row per granularity.
    for (let i = 1; i <= 100; i++) buffer.record({ ...event(0, day + i), requestId: `req_${i}` });
    buffer.start();
    await until(() => buffer.stats().written === 101);
    await buffer.stop();
    // 10 raw-event statements and 4 of rollups, spread over 2 s (timers never fire early; a
    // loaded machine only makes the span longer). Back to back they take a few milliseconds
    // each, a few hundred on a loaded machine.
    expect(sent.length).toBe(14);
    expect((sent.at(-1) as number) - (sent[0] as number)).toBeGreaterThanOrEqual(1_500);
  });

  it("flush does not wait out a timer's spread write: the write in progress hurries", async () => {
    const { buffer, db } = await newBuffer({
      maxEvents: 1000,
      batchSize: 1000,
      sliceSize: 10,
      flushIntervalMs: 50,
      // Longer than the test's timeout: only a hurried write ends in time.
      spreadMs: 600_000,
    });
    const day = Date.parse("2026-05-05T10:00:00Z");
    buffer.record(event(0, day));
    expect(await buffer.flush()).toBe(true);
    const sent = statementTimes(db);
    for (let i = 1; i <= 100; i++) buffer.record(event(i, day + i));
    buffer.start();
    await until(() => sent.length > 0);
    expect(await buffer.flush()).toBe(true);
    expect(buffer.stats()).toMatchObject({ written: 101, buffered: 0 });
    await buffer.stop();
  });

  it("flush writes everything recorded before it, even while a pass that started earlier runs", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 1000, batchSize: 1000, sliceSize: 5 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 50; i++) buffer.record(event(i, day + i));
    const first = buffer.flush();
    // Recorded while the first pass runs: that pass leaves them, the second flush takes them.
    await new Promise((r) => setImmediate(r));
    for (let i = 50; i < 80; i++) buffer.record(event(i, day + i));
    expect(buffer.stats().buffered).toBeGreaterThan(30);
    const second = buffer.flush();
    expect(await first).toBe(true);
    expect(await second).toBe(true);
    expect(buffer.stats()).toMatchObject({ recorded: 80, written: 80, buffered: 0 });
    const rows = await db.query<{ n: number }>("select count(*)::int as n from key_verifications");
    expect(rows[0]?.n).toBe(80);
    const minute = await db.query<{ n: number }>(
      "select sum(count)::int as n from verifications_per_minute",
    );
    expect(minute[0]?.n).toBe(80);
  });

  it("commits at most batchSize events per transaction, and the raw rows and rollups agree", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 1000, batchSize: 100, sliceSize: 30 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    // This flush creates the day's partitions.
    buffer.record(decision(day));
    buffer.record(event(0, day));
    expect(await buffer.flush()).toBe(true);
    const transactions = countTransactions(db);
    for (let i = 1; i < 251; i++) buffer.record(event(i % 7, day + i * 1000));
    expect(await buffer.flush()).toBe(true);
    expect(transactions()).toBe(3); // 100 + 100 + 50 events
    const [raw] = await db.query<{ n: number; spent: number }>(
      "select count(*)::int as n, sum(spent_credits)::int as spent from key_verifications",
    );
    for (const table of ["verifications_per_minute", "verifications_per_month"]) {
      const [sums] = await db.query<{ n: number; spent: number }>(
        `select sum(count)::int as n, sum(spent_credits)::int as spent from ${table}`,
      );
      expect(sums).toEqual(raw);
    }
    expect(raw?.n).toBe(251);
    const [decisions] = await db.query<{ n: number }>(
      "select count(*)::int as n from ratelimit_events",
    );
    expect(decisions?.n).toBe(1);
  });

  it("keeps the events when the database fails and writes each exactly once when it is back", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 1000, batchSize: 40, sliceSize: 10 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 100; i++) buffer.record(event(i, day + i));
    await buffer.flush(); // creates the partition, so the failure below hits the transaction
    for (let i = 100; i < 200; i++) buffer.record(event(i, day + i));
    const transaction = db.transaction;
    db.transaction = () => Promise.reject(new Error("connection lost"));
    expect(await buffer.flush()).toBe(false);
    for (let i = 200; i < 250; i++) buffer.record(event(i, day + i));
    expect(buffer.stats()).toMatchObject({ written: 100, buffered: 150, failedFlushes: 1 });
    db.transaction = transaction;
    expect(await buffer.flush()).toBe(true);
    expect(buffer.stats()).toMatchObject({ recorded: 250, written: 250, buffered: 0 });
    const [raw] = await db.query<{ n: number; distinct: number }>(
      "select count(*)::int as n, count(distinct request_id)::int as distinct from key_verifications",
    );
    expect(raw).toEqual({ n: 250, distinct: 250 });
    const [minute] = await db.query<{ n: number }>(
      "select sum(count)::int as n from verifications_per_minute",
    );
    expect(minute?.n).toBe(250);
  });
  it("stop retries a failing database until it is back", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 1000, batchSize: 40, sliceSize: 10 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 100; i++) buffer.record(event(i, day + i));
    await buffer.flush(); // creates the partition, so the failures below hit the transaction
    for (let i = 100; i < 150; i++) buffer.record(event(i, day + i));
    const transaction = db.transaction;
    let failures = 0;
    db.transaction = <T>(fn: Parameters<Db["transaction"]>[0]): Promise<T> => {
      // Back after three failed attempts: stop keeps trying and writes everything.
      if (++failures <= 3) return Promise.reject(new DbUnavailableError("connection lost"));
      return transaction.call(db, fn) as Promise<T>;
    };
    await buffer.stop(60_000);
    expect(failures).toBeGreaterThan(3);
    expect(buffer.stats()).toMatchObject({ recorded: 150, written: 150, dropped: 0, buffered: 0 });
  });

  it("writes a batch the database refused once in pieces, dropping nothing when no event is at fault", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 1000, batchSize: 40, sliceSize: 10 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 40; i++) buffer.record(event(i, day + i));
    await buffer.flush(); // creates the partition and writes the first 40
    for (let i = 40; i < 80; i++) buffer.record(event(i, day + i));
    const { transaction } = db;
    let calls = 0;
    db.transaction = <T>(fn: Parameters<Db["transaction"]>[0]): Promise<T> => {
      // The database answers and refuses the batch and its first pieces (bigint out of
      // range, say), and then takes them: no event was at fault.
      if (++calls <= 3)
        return Promise.reject(Object.assign(new Error("bigint out of range"), { code: "22003" }));
      return transaction.call(db, fn) as Promise<T>;
    };
    expect(await buffer.flush()).toBe(true);
    for (let i = 80; i < 100; i++) buffer.record(event(i, day + i));
    expect(await buffer.flush()).toBe(true);
    expect(buffer.stats()).toMatchObject({ recorded: 100, written: 100, dropped: 0, buffered: 0 });
    const [raw] = await db.query<{ n: number; distinct: number }>(
      "select count(*)::int as n, count(distinct request_id)::int as distinct from key_verifications",
    );
    expect(raw).toEqual({ n: 100, distinct: 100 });
    const [minute] = await db.query<{ n: number }>(
      "select sum(count)::int as n from verifications_per_minute",
    );
    expect(minute?.n).toBe(100);
  });

  it("keeps one batch while the database is down, instead of one per failed pass", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 1000, batchSize: 40, sliceSize: 10 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    db.transaction = () => Promise.reject(new DbUnavailableError("connection refused"));
    db.exec = () => Promise.reject(new DbUnavailableError("connection refused"));
    for (let i = 0; i < 30; i++) {
      buffer.record(event(i, day + i));
      expect(await buffer.flush()).toBe(false);
    }
    // 30 events, 30 failed passes: their rows share one batch and one chunk of memory.
    const held = buffer.stats();
    expect(held).toMatchObject({ recorded: 30, buffered: 30, dropped: 0 });
    expect(held.bufferedBytes).toBeLessThanOrEqual(256 * 1024);
  });

  it("stop gives up on a database that stays down, counting what it could not write as dropped", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 1000, batchSize: 40, sliceSize: 10 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 70; i++) buffer.record(event(i, day + i));
    const { transaction, exec } = db;
    db.transaction = () => Promise.reject(new Error("connection lost"));
    db.exec = () => Promise.reject(new Error("connection lost"));
    const started = performance.now();
    await buffer.stop(300);
    console.log(`stop gave up after ${(performance.now() - started).toFixed(0)} ms`);
    Object.assign(db, { transaction, exec });
    expect(buffer.stats()).toMatchObject({
      recorded: 0,
      written: 0,
      dropped: 70,
      buffered: 0,
    });
  });

  it("stop gives up a write that hangs at its deadline, and drops what is offered after it", async () => {
    const { buffer, db } = await newBuffer({ maxEvents: 1000, batchSize: 40, sliceSize: 10 });
    const day = Date.parse("2026-05-05T10:00:00Z");
    for (let i = 0; i < 100; i++) buffer.record(event(i, day + i));
    await buffer.flush(); // creates the partition, so the hang below is in the transaction
    for (let i = 100; i < 130; i++) buffer.record(event(i, day + i));
    const { transaction } = db;
    db.transaction = () => new Promise(() => {}); // a host that vanished: no answer, no error
    const started = performance.now();
    await buffer.stop(300);
    console.log(
      `stop gave up a hanging write after ${(performance.now() - started).toFixed(0)} ms`,
    );
    db.transaction = transaction;
    buffer.record(event(130, day + 130));
    expect(buffer.stats()).toMatchObject({
      recorded: 100,
      written: 100,
      dropped: 31,
      buffered: 0,
    });
  });

  it("bounds the bytes it holds as well as the events, counting what it drops", async () => {
    const { buffer, db } = await newBuffer({
      maxEvents: 10_000,
      maxBytes: 1 << 20,
      batchSize: 1000,
      sliceSize: 100,
    });
    const day = Date.parse("2026-05-05T10:00:00Z");
    // The largest tags a request may carry: 20 of 512 characters, quotes included.
    const tags = Array.from({ length: 20 }, (_, i) => `${i}"`.padEnd(512, "é"));
    for (let i = 0; i < 500; i++) buffer.record(event(i, day + i, tags));
    const { recorded, dropped } = buffer.stats();
    console.log(`${recorded} events of 500 held in 1 MiB, ${dropped} dropped`);
    expect(recorded + dropped).toBe(500);
    expect(dropped).toBeGreaterThan(0);
    expect(recorded).toBeGreaterThan(10);
    expect(await buffer.flush()).toBe(true);
    const [raw] = await db.query<{ n: number; tags: string[] }>(
      "select count(*)::int as n, min(tags) as tags from key_verifications",
    );
    expect(raw).toEqual({ n: recorded, tags });
    // Written out, the bytes are free again.
    buffer.record(event(1000, day));
    expect(buffer.stats().dropped).toBe(dropped);
  });
});

const decision = (time: number): AnalyticsEvent => ({
  kind: "ratelimit",
  time,
  workspaceId: "ws_test",
  namespaceId: "rlns_test",
  identifier: "user_1",
  passed: true,
  cost: 1,
  limit: 10,
  durationMs: 60_000,
  remaining: 9,
  overrideId: null,
  requestId: "req_decision",
});

/** Counts the transactions `db` runs from now on. */
/** When each statement of a transaction on `db` was sent (performance.now()), from now on. */
function statementTimes(db: Db): number[] {
  const times: number[] = [];
  const transaction = db.transaction.bind(db);
  db.transaction = (fn) =>
    transaction((tx) => {
      const stamped = {
        ...tx,
        query: ((...args: Parameters<typeof tx.query>) => {
          times.push(performance.now());
          return tx.query(...args);
        }) as typeof tx.query,
        copyCsv: (target: string, rows: string | Uint8Array) => {
          times.push(performance.now());
          return tx.copyCsv(target, rows);
        },
      };
      return fn(stamped);
    });
  return times;
}

/** Resolves once `done()` holds (polled; the test's timeout bounds the wait). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

function countTransactions(db: Db): () => number {
  let n = 0;
  const transaction = db.transaction.bind(db);
  db.transaction = (fn) => {
    n++;
    return transaction(fn);
  };
  return () => n;
}
