import { describe, expect, it } from "vitest";
import { expireCreditLedger } from "../../../../src/analytics/retention.js";
import { useServer } from "../../../harness/server.js";
import { verifierOf } from "../../keys/verify-key/calls.js";
import { DAY, freshMonth, statementOf, totals } from "./statements.js";

// Ledger entries are kept CREDIT_LEDGER_RETENTION_DAYS, apart from analytics: the hourly pass
// deletes those older than that and keeps the rest.

const s = useServer();
const verify = verifierOf(s);

describe("credit ledger retention", () => {
  it("deletes the entries older than the window and keeps the others", async () => {
    const t0 = freshMonth(s);
    const k = await s.seed.key({ credits: { remaining: 100 } });
    await verify({ key: k.key, credits: { cost: 3n } });
    s.clock.set(t0 + 10 * DAY);
    await verify({ key: k.key, credits: { cost: 4n } });
    const deleted = await expireCreditLedger(s.db, t0 + 15 * DAY, 10);
    expect(deleted).toBeGreaterThanOrEqual(1);
    const left = await statementOf(s, { keyId: k.keyId }, t0, t0 + 11 * DAY);
    expect(totals(left).spent).toBe(4);
  });
});
