import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  copyRatelimitRows,
  copyVerificationRows,
  ensureEventPartitions,
  type RatelimitEvent,
  ratelimitRow,
  type VerificationEvent,
  verificationRow,
} from "../../src/storage/queries/events.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

// The event rows go in with COPY in CSV format: whatever the text, it must come back as sent.

let database: TestDatabase;
const day = Date.parse("2026-05-05T00:00:00Z");
beforeAll(async () => {
  database = await createTestDatabase(currentEngine());
  await ensureEventPartitions(database.db, "key_verifications", [day]);
  await ensureEventPartitions(database.db, "ratelimit_events", [day]);
});
afterAll(() => database.drop());

/** Text that is awkward for CSV, for array literals and for COPY, mixed with anything. */
const nasty = fc.oneof(
  fc.constantFrom("", ",", '"', '""', "\\", "\\.", "\n\\.\n", "\r\n", "{", "}", "{a,b}", "NULL"),
  fc.constantFrom(" ", "é", "😀", "\t", "'", "\u0000", "a\ud800b"),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: fc.constantFrom(",", '"', "\\", "\n", "{", "}", "a", " "), maxLength: 12 }),
);
/** What PostgreSQL keeps of a JS string: no U+0000 (stored as U+FFFD), no lone surrogates. */
const stored = (s: string) =>
  s
    .replaceAll("\u0000", "\uFFFD")
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\uFFFD");

let n = 0;
const verification = fc.record({
  time: fc.integer({ min: day, max: day + 86_399_999 }),
  workspaceId: nasty,
  apiId: fc.option(nasty),
  keyId: fc.option(nasty),
  identityId: fc.option(nasty),
  externalId: fc.option(nasty),
  outcome: fc.constantFrom("VALID", "RATE_LIMITED"),
  tags: fc.array(nasty, { maxLength: 4 }),
  spentCredits: fc.integer({ min: 0, max: 2 ** 40 }),
});

describe("event rows written with COPY", () => {
  it("come back exactly as recorded, whatever the text (verifications)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(verification, { minLength: 1, maxLength: 20 }), async (rows) => {
        const events: VerificationEvent[] = rows.map((r) => ({ ...r, requestId: `req_${n++}` }));
        await copyVerificationRows(database.db, events.map(verificationRow).join(""));
        const back = await database.db.query<Record<string, unknown>>(
          `select time, workspace_id, api_id, key_id, identity_id, external_id, outcome, tags,
             spent_credits, request_id
           from key_verifications where request_id = any($1::text[]) order by request_id`,
          [events.map((e) => e.requestId)],
        );
        const want = events
          .map((e) => ({
            time: e.time,
            workspace_id: stored(e.workspaceId),
            api_id: e.apiId === null ? null : stored(e.apiId),
            key_id: e.keyId === null ? null : stored(e.keyId),
            identity_id: e.identityId === null ? null : stored(e.identityId),
            external_id: e.externalId === null ? null : stored(e.externalId),
            outcome: e.outcome,
            tags: e.tags.map(stored),
            spent_credits: e.spentCredits,
            request_id: e.requestId,
          }))
          .sort((a, b) => (a.request_id < b.request_id ? -1 : 1));
        expect(back).toEqual(want);
      }),
      { numRuns: 60 },
    );
  });

  it("come back exactly as recorded, whatever the text (rate-limit decisions)", async () => {
    await fc.assert(
      fc.asyncProperty(nasty, nasty, fc.option(nasty), fc.boolean(), async (ns, id, ov, ok) => {
        const e: RatelimitEvent = {
          time: day + 1,
          workspaceId: "ws_1",
          namespaceId: ns,
          identifier: id,
          passed: ok,
          cost: 3,
          limit: 10,
          durationMs: 60_000,
          remaining: 7,
          overrideId: ov,
          requestId: `req_${n++}`,
        };
        // As the event writer sends them: UTF-8 bytes.
        await copyRatelimitRows(database.db, Buffer.from(ratelimitRow(e)));
        const back = await database.db.query(
          `select namespace_id, identifier, passed, cost, window_limit, duration_ms, remaining,
             override_id from ratelimit_events where request_id = $1`,
          [e.requestId],
        );
        expect(back).toEqual([
          {
            namespace_id: stored(ns),
            identifier: stored(id),
            passed: ok,
            cost: 3,
            window_limit: 10,
            duration_ms: 60_000,
            remaining: 7,
            override_id: ov === null ? null : stored(ov),
          },
        ]);
      }),
      { numRuns: 60 },
    );
  });
});
