import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

// The event writer appends rows with COPY. When the database refuses a row, the COPY must
// fail with the database's error, and a transaction around it must roll back and give its
// connection back, so the writer can find the bad row and go on. (A driver that never
// settled such a COPY would hang the writer and leak the connection.)

let database: TestDatabase;
beforeAll(async () => {
  // Two connections: a leaked one would leave the second test a single one, and then none.
  database = await createTestDatabase(currentEngine(), { max: 2 });
  await database.db.exec("create table copy_refused (n bigint not null)");
});
afterAll(() => database.drop());

/** A value out of bigint's range: the database refuses the row. */
const BAD = "1\n9223372036854775808\n";

describe("a COPY the database refuses", () => {
  it("fails with the database's error, in a transaction too, and rolls it back", async () => {
    const { db } = database;
    for (let i = 0; i < 4; i++) {
      const failure = await db
        .transaction((tx) => tx.copyCsv("copy_refused (n)", BAD))
        .catch((err: unknown) => err);
      expect((failure as { code?: string }).code).toBe("22003");
      const outside = await db.copyCsv("copy_refused (n)", BAD).catch((err: unknown) => err);
      expect((outside as { code?: string }).code).toBe("22003");
    }
    // Nothing was written, and every connection is free for the next statements.
    const rows = await db.query<{ n: number }>("select count(*)::int as n from copy_refused");
    expect(rows).toEqual([{ n: 0 }]);
    await db.transaction((tx) => tx.copyCsv("copy_refused (n)", "7\n"));
    const after = await db.query<{ n: number }>("select n from copy_refused");
    expect(after).toEqual([{ n: 7 }]);
  });
});
