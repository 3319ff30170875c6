import { describe, expect, it } from "vitest";
import { ledgerAfter } from "../../src/storage/queries/webhook-cursors.js";
import { useServer } from "../harness/server.js";

// The credit events pass reads ledger entries in commit order: by transaction id as a
// number, then sequence. An order by the ids' text would put transaction 10 before 9 and
// move the pass's cursor past entries it never read.

const s = useServer();

describe("ledgerAfter", () => {
  it("orders entries by transaction id as a number, then by sequence, after the cursor", async () => {
    // At the server's present: the retention pass (run at start) deletes old entries.
    await s.db.query(
      `insert into credit_ledger (workspace_id, subject_id, at, spent, refilled, adjusted, tx, seq)
       values ('ws_order', 'key_a', $1, 1, 0, 0, '10'::xid8, 1),
              ('ws_order', 'key_a', $1, 1, 0, 0, '9'::xid8, 3),
              ('ws_order', 'key_a', $1, 1, 0, 0, '9'::xid8, 2),
              ('ws_order', 'key_a', $1, 1, 0, 0, '100'::xid8, 0)`,
      [s.clock.now()],
    );
    const read = async (tx: string, seq: number) =>
      (await ledgerAfter(s.db, tx, seq, 10))
        .filter((r) => r.workspaceId === "ws_order")
        .map((r) => `${r.tx}:${r.seq}`);
    expect(await read("0", 0)).toEqual(["9:2", "9:3", "10:1", "100:0"]);
    expect(await read("9", 2)).toEqual(["9:3", "10:1", "100:0"]);
    expect(await read("10", 1)).toEqual(["100:0"]);
  });
});
