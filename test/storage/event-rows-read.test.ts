import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type RatelimitEvent,
  ratelimitRow,
  ratelimitsFromRows,
  type VerificationEvent,
  verificationRow,
  verificationsFromRows,
} from "../../src/storage/queries/events.js";

// A refused batch is written again event by event, from its encoded rows: reading a row back
// must give the event that was encoded, whatever its text.

/** Text that is awkward for CSV and for array literals, mixed with anything. */
const nasty = fc.oneof(
  fc.constantFrom("", ",", '"', '""', "\\", "\\.", "\n\\.\n", "\r\n", "{", "}", "{a,b}", "NULL"),
  fc.constantFrom(" ", "é", "😀", "\t", "'", "\u0000", "a\ud800b"),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: fc.constantFrom(",", '"', "\\", "\n", "{", "}", "a", " "), maxLength: 12 }),
);
/** What the encoding keeps of a JS string: no U+0000, no lone surrogates (both U+FFFD). */
const kept = (s: string) =>
  s
    .replaceAll("\u0000", "\uFFFD")
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\uFFFD");
const keptOrNull = (s: string | null) => (s === null ? null : kept(s));

const verification: fc.Arbitrary<VerificationEvent> = fc.record({
  time: fc.integer({ min: 0, max: 2 ** 50 }),
  workspaceId: nasty,
  apiId: fc.option(nasty),
  keyId: fc.option(nasty),
  identityId: fc.option(nasty),
  externalId: fc.option(nasty),
  outcome: fc.constantFrom("VALID", "RATE_LIMITED"),
  tags: fc.array(nasty, { maxLength: 4 }),
  spentCredits: fc.oneof(fc.integer({ min: 0, max: 2 ** 50 }), fc.constant(2 ** 63)),
  requestId: nasty,
});

const decision: fc.Arbitrary<RatelimitEvent> = fc.record({
  time: fc.integer({ min: 0, max: 2 ** 50 }),
  workspaceId: nasty,
  namespaceId: nasty,
  identifier: nasty,
  passed: fc.boolean(),
  cost: fc.integer({ min: 0, max: 2 ** 50 }),
  limit: fc.integer({ min: 1, max: 2 ** 50 }),
  durationMs: fc.integer({ min: 1000, max: 2 ** 40 }),
  remaining: fc.integer({ min: 0, max: 2 ** 50 }),
  overrideId: fc.option(nasty),
  requestId: nasty,
});

/** Rows as the writer holds them: UTF-8 bytes, cut anywhere between rows. */
function bytesOf(rows: string[], cut: number): Uint8Array[] {
  const at = Math.min(cut, rows.length);
  return [rows.slice(0, at).join(""), rows.slice(at).join("")].map((t) => Buffer.from(t));
}

describe("event rows read back", () => {
  it("give the verifications that were encoded", () => {
    fc.assert(
      fc.property(fc.array(verification, { maxLength: 8 }), fc.nat(8), (events, cut) => {
        const back = verificationsFromRows(bytesOf(events.map(verificationRow), cut));
        expect(back).toEqual(
          events.map((e) => ({
            ...e,
            workspaceId: kept(e.workspaceId),
            apiId: keptOrNull(e.apiId),
            keyId: keptOrNull(e.keyId),
            identityId: keptOrNull(e.identityId),
            externalId: keptOrNull(e.externalId),
            tags: e.tags.map(kept),
            requestId: kept(e.requestId),
          })),
        );
      }),
      { numRuns: 300 },
    );
  });

  it("give the rate-limit decisions that were encoded", () => {
    fc.assert(
      fc.property(fc.array(decision, { maxLength: 8 }), fc.nat(8), (events, cut) => {
        const back = ratelimitsFromRows(bytesOf(events.map(ratelimitRow), cut));
        expect(back).toEqual(
          events.map((e) => ({
            ...e,
            workspaceId: kept(e.workspaceId),
            namespaceId: kept(e.namespaceId),
            identifier: kept(e.identifier),
            overrideId: keptOrNull(e.overrideId),
            requestId: kept(e.requestId),
          })),
        );
      }),
      { numRuns: 300 },
    );
  });

  it("keep the largest tags whole", () => {
    const tags = Array.from({ length: 20 }, (_, i) => `${i}"\\,{}😀`.padEnd(512, "中"));
    const event: VerificationEvent = {
      time: 1,
      workspaceId: "ws_1",
      apiId: null,
      keyId: null,
      identityId: null,
      externalId: null,
      outcome: "VALID",
      tags,
      spentCredits: 0,
      requestId: "req_1",
    };
    expect(verificationsFromRows([Buffer.from(verificationRow(event))])).toEqual([event]);
  });
});
