import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChunkPool, CsvRows } from "../../../src/analytics/csv-rows.js";

const text = (slices: readonly Uint8Array[]) =>
  slices.map((s) => Buffer.from(s).toString("utf8")).join("");
const lines = (slice: Uint8Array) => Buffer.from(slice).toString("utf8").split("\n").length - 1;

describe("CsvRows", () => {
  it("gives back every row in order, in slices of at most rowsPerSlice rows", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme", maxLength: 3000 }), { maxLength: 400 }),
        fc.integer({ min: 1, max: 60 }),
        (bodies, perSlice) => {
          const rows = new CsvRows(perSlice, new ChunkPool());
          const want = bodies.map((b) => `${b.replaceAll("\n", " ")}\n`);
          for (const r of want) rows.add(r);
          const slices = rows.slices();
          expect(rows.rows).toBe(want.length);
          expect(text(slices)).toBe(want.join(""));
          for (const s of slices) {
            expect(lines(s)).toBeGreaterThan(0);
            expect(lines(s)).toBeLessThanOrEqual(perSlice);
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it("crosses chunks and holds a row larger than a chunk", () => {
    const rows = new CsvRows(50, new ChunkPool());
    const want: string[] = [];
    for (let i = 0; i < 3000; i++) want.push(`${i},"${"é".repeat(100)}"\n`);
    want.push(`${"x".repeat(600_000)}\n`, "last\n");
    for (const r of want) rows.add(r);
    expect(text(rows.slices())).toBe(want.join(""));
  });

  it("reuses its memory after release, and the next rows do not see the old ones", () => {
    const pool = new ChunkPool();
    const first = new CsvRows(10, pool);
    for (let i = 0; i < 100; i++) first.add(`old ${i}\n`);
    const chunk = first.slices()[0]?.buffer;
    first.release();
    const second = new CsvRows(10, pool);
    second.add("new\n");
    expect(second.slices()[0]?.buffer).toBe(chunk);
    expect(text(second.slices())).toBe("new\n");
  });
});
