import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  bucketCount,
  bucketStarts,
  changeEntry,
  splitRange,
} from "../../../src/domain/credit-ledger.js";

const HOUR = 3_600_000;
const DAY = 86_400_000;

describe("changeEntry", () => {
  it("splits a change into the refill applied first and the change by hand", () => {
    expect(changeEntry("key_a", 6, 50, 60)).toEqual({
      subjectId: "key_a",
      spent: 0,
      refilled: 44,
      adjusted: 10,
    });
    expect(changeEntry("key_a", 7, 7, 3)).toMatchObject({ refilled: 0, adjusted: -4 });
  });

  it("counts an unlimited balance as 0, and records nothing when nothing moved", () => {
    expect(changeEntry("key_a", 20, 20, null)).toMatchObject({ adjusted: -20 });
    expect(changeEntry("key_a", null, null, 5)).toMatchObject({ adjusted: 5 });
    expect(changeEntry("key_a", 5, 5, 5)).toBeUndefined();
    expect(changeEntry("key_a", null, null, null)).toBeUndefined();
  });
});

describe("statement buckets", () => {
  const t = Date.UTC(2030, 0, 31, 22, 30);

  it("starts at the bucket holding start and ends before end, in UTC months too", () => {
    expect(bucketStarts("hour", t, t + 2 * HOUR)).toEqual([
      Date.UTC(2030, 0, 31, 22),
      Date.UTC(2030, 0, 31, 23),
      Date.UTC(2030, 1, 1, 0),
    ]);
    expect(bucketStarts("month", t, Date.UTC(2030, 2, 1))).toEqual([
      Date.UTC(2030, 0, 1),
      Date.UTC(2030, 1, 1),
    ]);
    expect(bucketStarts("day", t, t + 1)).toEqual([Date.UTC(2030, 0, 31)]);
  });

  it("counts exactly the buckets it lists", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("hour" as const, "day" as const, "month" as const),
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: 1, max: 900 * DAY }),
        (g, start, length) => {
          if (g === "hour" && length > 900 * HOUR) return;
          expect(bucketCount(g, start, start + length)).toBe(
            bucketStarts(g, start, start + length).length,
          );
        },
      ),
    );
  });
});

describe("splitRange", () => {
  const day = Date.UTC(2030, 4, 10);

  it("reads whole buckets apart from the parts at either end", () => {
    expect(splitRange("day", day + HOUR, day + 3 * DAY + HOUR)).toEqual({
      whole: [day + DAY, day + 3 * DAY],
      partial: [
        [day + HOUR, day + DAY],
        [day + 3 * DAY, day + 3 * DAY + HOUR],
      ],
    });
    expect(splitRange("day", day, day + 2 * DAY)).toEqual({
      whole: [day, day + 2 * DAY],
      partial: [],
    });
  });

  it("reads a range within one or two buckets' parts as it is", () => {
    expect(splitRange("day", day + HOUR, day + 2 * HOUR)).toEqual({
      whole: undefined,
      partial: [[day + HOUR, day + 2 * HOUR]],
    });
    expect(splitRange("month", day, day + 40 * DAY)).toEqual({
      whole: undefined,
      partial: [[day, day + 40 * DAY]],
    });
  });
});
