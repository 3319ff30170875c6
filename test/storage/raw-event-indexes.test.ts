import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/storage/migrate.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

// The raw event tables' indexes serve only analytics over raw events, which PGlite refuses;
// there they would only slow every event write, so migrate drops them on PGlite alone.

const RAW_INDEXES = [
  "key_verifications_key_time",
  "key_verifications_workspace_time",
  "ratelimit_events_workspace_time",
];

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase(currentEngine());
});
afterAll(() => database.drop());

async function rawIndexes(): Promise<string[]> {
  const rows = await database.db.query<{ name: string }>(
    "select indexname as name from pg_indexes where indexname = any($1::text[]) order by 1",
    [RAW_INDEXES],
  );
  return rows.map((r) => r.name);
}

describe("raw event indexes", () => {
  it("exist on PostgreSQL and not on PGlite", async () => {
    expect(await rawIndexes()).toEqual(database.engine === "pglite" ? [] : RAW_INDEXES);
  });

  it("stay that way when migrate runs again, and the other indexes stay", async () => {
    expect(await migrate(database.db, Date.now())).toEqual([]);
    expect(await rawIndexes()).toEqual(database.engine === "pglite" ? [] : RAW_INDEXES);
    const rows = await database.db.query<{ n: number }>(
      "select count(*)::int as n from pg_indexes where indexname = 'verifications_per_day_api'",
    );
    expect(rows).toEqual([{ n: 1 }]);
  });
});
