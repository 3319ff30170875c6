import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { LastUsedWriter } from "../../../src/analytics/last-used.js";
import type { Db } from "../../../src/storage/db.js";

describe("the lastUsedAt writer", () => {
  it("tries a failed write again with the next one, even with no new use", async () => {
    const sent: unknown[] = [];
    let fail = true;
    const db = {
      query: async (_sql: string, params: unknown[]) => {
        if (fail) throw new Error("connection lost");
        sent.push(JSON.parse(params[0] as string));
        return [];
      },
    } as unknown as Db;
    const writer = new LastUsedWriter(db, pino({ level: "silent" }));
    await writer.write(new Map([["key_once", 1_000_000]]));
    expect(writer.pending).toBe(true);
    fail = false;
    await writer.write(new Map([["key_other", 1_000_500]]));
    expect(sent).toEqual([
      [
        { id: "key_once", time: 1_000_000 },
        { id: "key_other", time: 1_000_500 },
      ],
    ]);
    expect(writer.pending).toBe(false);
    // Written: within the minute, the same key is not written again.
    await writer.write(new Map([["key_once", 1_030_000]]));
    expect(sent).toHaveLength(1);
  });
});
