import { describe, expect, it } from "vitest";
import { applyRetention } from "../../../src/analytics/retention.js";
import { useServer } from "../../harness/server.js";

// The analytics event store behind analytics.getVerifications: verifications move a key's
// lastUsedAt (keys.getKey) within a minute, and retention drops raw partitions and rollup
// rows older than its window, keeping the first kept day whole in every table.

const s = useServer();
const DAY = 86_400_000;

async function verify(key: string) {
  const res = await s.as(null).keys.verifyKey({ key });
  expect(res.data?.valid).toBe(true);
}

async function lastUsedAt(keyId: string): Promise<number | undefined> {
  const used = (await s.api.keys.getKey({ keyId })).data?.lastUsedAt;
  return used === undefined ? undefined : Number(used);
}

async function count(sql: string): Promise<number> {
  const rows = await s.db.query<{ n: number }>(sql);
  return Number(rows[0]?.n ?? 0);
}

describe("lastUsedAt", () => {
  it("follows verifications within a minute", async () => {
    const k = await s.seed.key();
    expect(await lastUsedAt(k.keyId)).toBeUndefined();
    await verify(k.key);
    const firstUse = s.clock.now();
    await s.app.deps.events.flush();
    expect(await lastUsedAt(k.keyId)).toBe(firstUse);

    // Within the minute the stored time may stay behind; a minute later it moves.
    s.clock.advance(30_000);
    await verify(k.key);
    await s.app.deps.events.flush();
    const stored = (await lastUsedAt(k.keyId)) as number;
    expect(s.clock.now() - stored).toBeLessThanOrEqual(60_000);
    s.clock.advance(40_000);
    await verify(k.key);
    await s.app.deps.events.flush();
    expect(await lastUsedAt(k.keyId)).toBe(s.clock.now());
  });
});

describe("retention", () => {
  it("removes analytics older than the window from raw tables and every rollup", async () => {
    const now = s.clock.now();
    const k = await s.seed.key();
    s.clock.set(now - 200 * DAY);
    await verify(k.key);
    await s.api.ratelimit.limit({
      namespace: "retention.ns",
      identifier: "u",
      limit: 10n,
      duration: 60_000n,
    });
    s.clock.set(now);
    await verify(k.key);
    await s.app.deps.events.flush();
    const old = `${new Date(now - 200 * DAY).toISOString().slice(0, 10).replaceAll("-", "")}`;
    const tables = await s.db.query<{ name: string }>(
      "select tablename as name from pg_tables where tablename like $1 order by 1",
      [`%_${old}`],
    );
    expect(tables.map((t) => t.name)).toEqual([
      `key_verifications_${old}`,
      `ratelimit_events_${old}`,
      `verifications_per_minute_${old}`,
    ]);

    const result = await applyRetention(s.db, now, 90);
    expect(result.droppedPartitions.sort()).toEqual(tables.map((t) => t.name));
    expect(result.deletedRollupRows).toBeGreaterThanOrEqual(3);
    for (const g of ["hour", "day", "month"]) {
      expect(
        await count(
          `select count(*)::int as n from verifications_per_${g} where key_id = '${k.keyId}'`,
        ),
      ).toBe(1);
    }
    expect(
      await count(`select count(*)::int as n from key_verifications where key_id = '${k.keyId}'`),
    ).toBe(1);
    // A second pass finds nothing more.
    expect(await applyRetention(s.db, now, 90)).toEqual({
      droppedPartitions: [],
      deletedRollupRows: 0,
    });
  });
});

describe("retention edges", () => {
  it("keeps the whole first kept day in the raw, minute, hour and day tables alike", async () => {
    // Now is 15:30 UTC; with 90 days the cutoff falls at 15:30 on a day that is kept whole.
    const now = Date.parse("2026-06-30T15:30:00Z");
    const cutoffDay = Date.parse("2026-04-01T00:00:00Z");
    const k = await s.seed.key();
    s.clock.set(cutoffDay + 30 * 60_000); // 00:30 on the cutoff's day, before the cutoff hour
    await verify(k.key);
    s.clock.set(now);
    await s.app.deps.events.flush();
    await applyRetention(s.db, now, 90);
    const where = `where key_id = '${k.keyId}'`;
    const counts = await Promise.all(
      ["key_verifications", "verifications_per_minute", "verifications_per_hour"].map((t) =>
        count(`select count(*)::int as n from ${t} ${where}`),
      ),
    );
    const day = await count(
      `select coalesce(sum(count), 0)::int as n from verifications_per_day ${where}`,
    );
    expect([...counts, day]).toEqual([1, 1, 1, 1]);
  });
});
