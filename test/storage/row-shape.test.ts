import { setFlagsFromString } from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyRecordByHashes } from "../../src/storage/queries/key-records.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

// Rows live on in the caches (a key record is read on every verification of its key), so
// they must be ordinary V8 objects, not dictionaries: postgres.js builds its rows in a way
// that leaves them in dictionary mode (twice the memory, a hash lookup per field read), and
// the adapter copies them. V8's own verdict, through its natives syntax.
setFlagsFromString("--allow-natives-syntax");
const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (
  o: object,
) => boolean;

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase(currentEngine());
});
afterAll(() => database.drop());

describe(`rows of ${currentEngine()}`, () => {
  it("are objects with fast properties, one shape per statement", async () => {
    const columns = Array.from({ length: 30 }, (_, i) => `${i} as c${i}`).join(", ");
    const rows = await database.db.query<object>(
      `select ${columns}, n from generate_series(1, 3) n`,
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      expect(hasFastProperties(row)).toBe(true);
    }
    expect(Object.keys(rows[2] as object)).toEqual(Object.keys(rows[0] as object));
  });

  it("make key records with fast properties", async () => {
    const { db } = database;
    await db.query("insert into workspaces (id, name, created_at) values ('ws_rows', 'rows', 0)");
    await db.query(
      "insert into apis (id, workspace_id, name, created_at) values ('api_rows', 'ws_rows', 'rows', 0)",
    );
    await db.query(
      `insert into keys (id, workspace_id, api_id, hash, start, prefix, enabled, created_at)
       values ('key_rows', 'ws_rows', 'api_rows', 'hash_rows', 'sk_', 'sk', true, 0)`,
    );
    const found = await keyRecordByHashes(db, { workspaceId: "ws_rows" }, ["hash_rows"]);
    const record = found?.record;
    expect(record?.id).toBe("key_rows");
    expect(hasFastProperties(record as object)).toBe(true);
  });
});
