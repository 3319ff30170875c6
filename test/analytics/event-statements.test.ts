import { describe, expect, it } from "vitest";
import type { Queryable } from "../../src/storage/db.js";
import type { AnalyticsEvent } from "../../src/storage/queries/events.js";
import { useServer } from "../harness/server.js";

// How many rows each statement of the server's event writer carries depends on the engine:
// PGlite pays mostly per statement, on a thread of the server's own process, so it gets long
// COPYs; a PostgreSQL backend on the same host takes a core from the requests for as long as
// a statement runs, so it gets short ones.

const EVENTS = 2_500;
const ROWS_PER_COPY = { pglite: 1000, postgres: 100 } as const;

function verification(i: number, workspaceId: string): AnalyticsEvent {
  return {
    kind: "verification",
    time: Date.now(),
    workspaceId,
    apiId: null,
    keyId: null,
    identityId: null,
    externalId: null,
    outcome: "VALID",
    tags: [],
    spentCredits: 0,
    requestId: `req_statements_${i}`,
  };
}

describe("the event writer's statements", () => {
  const s = useServer();

  it("carry the rows the engine is best at", async () => {
    const db = s.app.deps.db;
    const transaction = db.transaction;
    const copies: number[] = [];
    // Counts the verification rows of each COPY the writer's transaction sends; the
    // statements themselves run unchanged.
    db.transaction = ((fn: (tx: Queryable) => Promise<unknown>) =>
      transaction.call(db, (tx) =>
        fn({
          query: (text, params, options) => tx.query(text, params, options),
          exec: (script) => tx.exec(script),
          copyCsv: (target, csv) => {
            if (target.startsWith("key_verifications")) {
              const text = typeof csv === "string" ? csv : Buffer.from(csv).toString();
              copies.push(text.split("\n").filter((line) => line !== "").length);
            }
            return tx.copyCsv(target, csv);
          },
        }),
      )) as typeof db.transaction;
    try {
      const events = s.app.deps.events;
      for (let i = 0; i < EVENTS; i++) events.record(verification(i, s.workspaceId));
      expect(await events.flush()).toBe(true);
    } finally {
      db.transaction = transaction;
    }
    const rows = ROWS_PER_COPY[s.engine];
    expect(copies.reduce((a, b) => a + b, 0)).toBe(EVENTS);
    expect(copies).toHaveLength(Math.ceil(EVENTS / rows));
    expect(Math.max(...copies)).toBe(rows);
  });
});
