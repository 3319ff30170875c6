import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventBuffer } from "../../src/analytics/event-buffer.js";
import { Rollup } from "../../src/domain/analytics/rollups.js";
import { GRANULARITIES } from "../../src/domain/analytics/tables.js";
import { loadMigrations } from "../../src/storage/migrate.js";
import type { AnalyticsEvent } from "../../src/storage/queries/events.js";
import { rollupAdd, rollupTable } from "../../src/storage/queries/rollups.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

// A verification may carry 20 tags of 512 characters. The rollups group verifications by their
// tags; an index over the tags themselves cannot hold an entry that large (a B-tree entry is
// at most ~2.7 kB), so the database refused the group and the whole batch with it.

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase(currentEngine());
});
afterAll(() => database.drop());

/** 512 code points that do not compress: a mix of 1-, 2-, 3- and 4-byte UTF-8 characters. */
function hardTag(seed: number): string {
  let x = seed * 2_654_435_761 + 1;
  const out: string[] = [];
  for (let i = 0; i < 512; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    const ranges = [0x21, 0xa1, 0x4e00, 0x1f300] as const;
    const base = ranges[x % 4] as number;
    out.push(String.fromCodePoint(base + ((x >> 3) % 90)));
  }
  return out.join("");
}

/** The largest tags the contract allows: 20 of 512 characters. */
const maxTags = (seed: number) => Array.from({ length: 20 }, (_, i) => hardTag(seed * 100 + i));

const verification = (
  workspaceId: string,
  time: number,
  tags: string[],
  requestId: string,
): Extract<AnalyticsEvent, { kind: "verification" }> => ({
  kind: "verification",
  time,
  workspaceId,
  apiId: "api_1",
  keyId: "key_1",
  identityId: null,
  externalId: null,
  outcome: "VALID",
  tags,
  spentCredits: 1,
  requestId,
});

describe("rollup groups with the largest tags", () => {
  it("are stored at every granularity, with another workspace's events of the same batch", async () => {
    const { db } = database;
    const buffer = new EventBuffer(
      db,
      { maxEvents: 100, maxBytes: 1 << 24, flushIntervalMs: 60_000, batchSize: 100, sliceSize: 50 },
      pino({ level: "silent" }),
    );
    const time = Date.parse("2026-05-05T10:00:00Z");
    const tags = maxTags(1);
    buffer.record(verification("ws_big", time, tags, "req_big_1"));
    buffer.record(verification("ws_other", time, ["plain"], "req_other_1"));
    // The same set of tags in another order belongs to the same group.
    buffer.record(verification("ws_big", time + 1, [...tags].reverse(), "req_big_2"));
    // The longest rate-limit identifier (no index of the raw tables holds input text).
    const identifier = hardTag(7);
    buffer.record({
      kind: "ratelimit",
      time,
      workspaceId: "ws_big",
      namespaceId: "rlns_1",
      identifier,
      passed: true,
      cost: 1,
      limit: 10,
      durationMs: 60_000,
      remaining: 9,
      overrideId: null,
      requestId: "req_decision",
    });
    expect(await buffer.flush()).toBe(true);
    expect(buffer.stats()).toMatchObject({ recorded: 4, written: 4, dropped: 0 });
    const decisions = await db.query<{ identifier: string }>(
      "select identifier from ratelimit_events",
    );
    expect(decisions).toEqual([{ identifier }]);

    const raw = await db.query<{ request_id: string }>(
      "select request_id from key_verifications order by request_id",
    );
    expect(raw.map((r) => r.request_id)).toEqual(["req_big_1", "req_big_2", "req_other_1"]);
    for (const g of GRANULARITIES) {
      const rows = await db.query<{ workspace_id: string; count: number; tags: string[] }>(
        `select workspace_id, count::int as count, tags from ${rollupTable(g)} order by 1`,
      );
      expect(rows, g).toEqual([
        { workspace_id: "ws_big", count: 2, tags: [...tags].sort() },
        { workspace_id: "ws_other", count: 1, tags: ["plain"] },
      ]);
    }
  });

  it("are told apart by their tags: one tag 'a,b' is not the two tags 'a' and 'b'", async () => {
    const { db } = database;
    const rollup = new Rollup();
    const time = Date.parse("2026-05-05T11:00:00Z");
    for (const tags of [["a,b"], ["a", "b"], ["b", "a"], ['{"a"}'], ["{a}"], []]) {
      rollup.add(verification("ws_split", time, tags, ""));
    }
    await db.transaction(async (tx) => {
      for (const part of [rollup.rows().hour.slice(0, 3), rollup.rows().hour.slice(3)])
        await rollupAdd(tx, "hour", part);
    });
    const rows = await db.query<{ tags: string[]; count: number }>(
      "select tags, count::int as count from verifications_per_hour where workspace_id = 'ws_split' order by tags",
    );
    expect(rows).toEqual([
      { tags: [], count: 1 },
      { tags: ["a", "b"], count: 2 },
      { tags: ["a,b"], count: 1 },
      { tags: ['{"a"}'], count: 1 },
      { tags: ["{a}"], count: 1 },
    ]);
  });
});

describe("the digest migration", () => {
  it("keeps the groups written before it, and later writes add to them", async () => {
    const migrations = await loadMigrations();
    const before = migrations.filter((m) => m.version < 7);
    const digest = migrations.find((m) => m.version === 7);
    expect(digest?.name).toBe("rollup_tags_digest");
    const rolledBack = new Error("rolled back on purpose");
    // A schema of its own, migrated up to the version before the digest, in a transaction
    // that is rolled back at the end: the test database is left as it was.
    const failure = await database.db
      .transaction(async (tx) => {
        await tx.exec("create schema digest_migration; set local search_path to digest_migration");
        for (const m of before) await tx.exec(m.sql);
        await tx.exec(
          `create table verifications_per_minute_20260505 partition of verifications_per_minute
             for values from ('2026-05-05') to ('2026-05-06');
           insert into verifications_per_minute
             (time, workspace_id, api_id, key_id, identity_id, external_id, outcome, tags, count, spent_credits)
           values ('2026-05-05T10:00Z', 'ws_1', 'api_1', 'key_1', null, null, 'VALID', '{a,b}', 3, 2),
                  ('2026-05-05T10:00Z', 'ws_1', 'api_1', 'key_1', null, null, 'VALID', '{}', 1, 0);
           insert into verifications_per_month
             (time, workspace_id, api_id, key_id, identity_id, external_id, outcome, tags, count, spent_credits)
           values ('2026-05-01T00:00Z', 'ws_1', 'api_1', 'key_1', null, null, 'VALID', '{a,b}', 3, 2)`,
        );
        await tx.exec(digest?.sql ?? "");
        const rollup = new Rollup();
        const time = Date.parse("2026-05-05T10:00:30Z");
        rollup.add(verification("ws_1", time, ["b", "a"], ""));
        rollup.add(verification("ws_1", time, [], ""));
        await rollupAdd(tx, "minute", rollup.rows().minute);
        await rollupAdd(tx, "month", rollup.rows().month);
        const minute = await tx.query<{ tags: string[]; count: number; spent: number }>(
          `select tags, count::int as count, spent_credits::int as spent
           from verifications_per_minute order by tags`,
        );
        expect(minute).toEqual([
          { tags: [], count: 2, spent: 1 },
          { tags: ["a", "b"], count: 4, spent: 3 },
        ]);
        const month = await tx.query<{ count: number }>(
          "select count::int as count from verifications_per_month order by tags",
        );
        expect(month).toEqual([{ count: 1 }, { count: 4 }]);
        throw rolledBack;
      })
      .catch((err: unknown) => err);
    expect(failure).toBe(rolledBack);
  });
});
