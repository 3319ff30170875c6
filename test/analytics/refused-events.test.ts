import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { EventBuffer } from "../../src/analytics/event-buffer.js";
import { createMetrics, registerEventMetrics } from "../../src/metrics.js";
import { type Db, DbUnavailableError } from "../../src/storage/db.js";
import type { AnalyticsEvent } from "../../src/storage/queries/events.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

// One event the database refuses must cost no other event its place, least of all another
// workspace's: the writer finds it by writing the refused batch again in pieces, drops only
// it, counts it and logs it once. The bad events here are real rows the database refuses:
// credits spent beyond PostgreSQL's bigint (no request can spend that much; only a bug could
// produce one, which is exactly when the rest must survive).

const TOO_BIG = 2 ** 63;
const day = Date.parse("2026-05-05T10:00:00Z");

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

const verification = (i: number, bad = false): AnalyticsEvent => ({
  kind: "verification",
  time: day + i,
  workspaceId: `ws_${i % 3}`,
  apiId: "api_1",
  keyId: `key_${i % 5}`,
  identityId: null,
  externalId: null,
  outcome: "VALID",
  tags: [`t${i % 2}`],
  spentCredits: bad ? TOO_BIG : 1,
  requestId: `req_${i}`,
});

const decision = (i: number, bad = false): AnalyticsEvent => ({
  kind: "ratelimit",
  time: day + i,
  workspaceId: `ws_${i % 3}`,
  namespaceId: "rlns_1",
  identifier: `user_${i}`,
  passed: true,
  cost: bad ? TOO_BIG : 1,
  limit: 10,
  durationMs: 60_000,
  remaining: 9,
  overrideId: null,
  requestId: `req_${i}`,
});

/** A buffer over a fresh database, with its log lines (JSON) collected. */
async function newBuffer(batchSize: number) {
  database = await createTestDatabase(currentEngine());
  const { db } = database;
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const options = { maxEvents: 10_000, maxBytes: 1 << 26, flushIntervalMs: 60_000, batchSize };
  const buffer = new EventBuffer(db, { ...options, sliceSize: 20 }, log);
  const refusals = () => lines.filter((l) => String(l.msg).includes("refuses"));
  const metrics = createMetrics();
  registerEventMetrics(metrics, buffer);
  /** latchkey_analytics_events_rejected_total as /metrics shows it. */
  const rejectedMetric = async () => {
    const text = await metrics.registry.getSingleMetricAsString(
      "latchkey_analytics_events_rejected_total",
    );
    return Number(/^latchkey_analytics_events_rejected_total (\d+)$/m.exec(text)?.[1]);
  };
  return { db, buffer, refusals, rejectedMetric };
}

/** Request ids of the stored verifications and decisions, and the rollups' total count. */
async function stored(db: Db) {
  const ids = async (table: string) =>
    (await db.query<{ request_id: string }>(`select request_id from ${table} order by 1`)).map(
      (r) => r.request_id,
    );
  const rollups: number[] = [];
  for (const g of ["minute", "hour", "day", "month"]) {
    const [r] = await db.query<{ n: number }>(
      `select coalesce(sum(count), 0)::int as n from verifications_per_${g}`,
    );
    rollups.push(r?.n ?? -1);
  }
  return {
    verifications: await ids("key_verifications"),
    decisions: await ids("ratelimit_events"),
    rollups,
  };
}

const ids = (xs: number[]) => xs.map((i) => `req_${i}`).sort();
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("events the database refuses", () => {
  it("cost no other event its place: the rest of the batch is written, the bad one dropped, counted and logged", async () => {
    const { db, buffer, refusals, rejectedMetric } = await newBuffer(100);
    for (const i of range(100)) buffer.record(verification(i, i === 37));
    expect(await buffer.flush()).toBe(true);
    expect(await rejectedMetric()).toBe(1);
    expect(await rejectedMetric()).toBe(1);

    const good = range(100).filter((i) => i !== 37);
    expect(await stored(db)).toEqual({
      verifications: ids(good),
      decisions: [],
      rollups: [99, 99, 99, 99],
    });
    expect(buffer.stats()).toMatchObject({
      recorded: 99,
      dropped: 1,
      rejected: 1,
      written: 99,
      buffered: 0,
    });
    expect(refusals()).toHaveLength(1);
    expect(refusals()[0]).toMatchObject({ code: "22003", requestId: "req_37", refused: 1 });
  });

  it("a flood of bad events: each is dropped alone, every good one is written, one log line", async () => {
    const { db, buffer, refusals, rejectedMetric } = await newBuffer(30);
    const bad = (i: number) => i % 4 === 1;
    for (const i of range(60)) buffer.record(verification(i, bad(i)));
    for (const i of range(20).map((i) => i + 1000)) buffer.record(decision(i, bad(i)));
    expect(await buffer.flush()).toBe(true);

    const good = range(60).filter((i) => !bad(i));
    const goodDecisions = range(20)
      .map((i) => i + 1000)
      .filter((i) => !bad(i));
    expect(await stored(db)).toEqual({
      verifications: ids(good),
      decisions: ids(goodDecisions),
      rollups: Array(4).fill(good.length),
    });
    const rejected = 60 - good.length + 20 - goodDecisions.length;
    expect(buffer.stats()).toMatchObject({
      recorded: 80 - rejected,
      dropped: rejected,
      rejected,
      written: 80 - rejected,
      buffered: 0,
    });
    // Counted by the metric one by one; logged once.
    expect(await rejectedMetric()).toBe(rejected);
    expect(refusals()).toHaveLength(1);
  });

  it("while the pieces are written, an outage keeps the rest buffered, and each is written once", async () => {
    const { db, buffer } = await newBuffer(100);
    for (const i of range(100)) buffer.record(verification(i, i === 90));
    // The database goes away once the first half of the refused batch is written.
    const { transaction } = db;
    db.transaction = <T>(fn: Parameters<Db["transaction"]>[0]): Promise<T> => {
      if (buffer.stats().written > 0)
        return Promise.reject(new DbUnavailableError("connection refused"));
      return transaction.call(db, fn) as Promise<T>;
    };
    expect(await buffer.flush()).toBe(false);
    expect(buffer.stats()).toMatchObject({ written: 50, buffered: 50, dropped: 0, rejected: 0 });
    db.transaction = transaction;
    expect(await buffer.flush()).toBe(true);

    const good = range(100).filter((i) => i !== 90);
    expect(await stored(db)).toEqual({
      verifications: ids(good),
      decisions: [],
      rollups: [99, 99, 99, 99],
    });
    expect(buffer.stats()).toMatchObject({ recorded: 99, written: 99, dropped: 1, rejected: 1 });
  });

  it("recorded + dropped still accounts for every event when stop gives up on the pieces left", async () => {
    const { db, buffer } = await newBuffer(50);
    for (const i of range(50)) buffer.record(verification(i, i === 40));
    // As above: the first half of the refused batch is written, then the database is gone.
    const { transaction } = db;
    db.transaction = <T>(fn: Parameters<Db["transaction"]>[0]): Promise<T> => {
      if (buffer.stats().written > 0)
        return Promise.reject(new DbUnavailableError("connection refused"));
      return transaction.call(db, fn) as Promise<T>;
    };
    expect(await buffer.flush()).toBe(false);
    // The database stays away: stop gives up on the half left.
    await buffer.stop(50);
    db.transaction = transaction;
    const s = buffer.stats();
    expect(s).toMatchObject({ recorded: 25, written: 25, dropped: 25, buffered: 0 });
    const [raw] = await db.query<{ n: number }>("select count(*)::int as n from key_verifications");
    expect(raw?.n).toBe(s.written);
  });
});
