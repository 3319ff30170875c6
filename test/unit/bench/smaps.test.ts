import { describe, expect, it } from "vitest";
import { memoryParts, partsOf } from "../../../bench/lib/smaps.ts";

/** One mapping of a smaps text: its header line and its Rss line. */
const mapping = (start: number, end: number, perms: string, path: string, rssKb: number) =>
  [
    `${start.toString(16)}-${end.toString(16)} ${perms} 00000000 00:00 0    ${path}`,
    `Size:           ${(end - start) / 1024} kB`,
    `Rss:            ${rssKb} kB`,
    "Pss:            0 kB",
  ].join("\n");

const GiB = 2 ** 30;
const MiB = 2 ** 20;
const base = 0x7f0000000000;

describe("partsOf (bench/lib/smaps.ts)", () => {
  it("counts a read-write mapping followed by gigabytes of guard pages as a WebAssembly memory", () => {
    const text = [
      mapping(0x400000, 0x800000, "r-xp", "/usr/bin/node", 4096),
      mapping(0x1000000, 0x1200000, "rw-p", "[heap]", 1024),
      mapping(base, base + 128 * MiB, "rw-p", "", 30 * 1024),
      mapping(base + 128 * MiB, base + 128 * MiB + 8 * GiB, "---p", "", 0),
      mapping(base + 9 * GiB, base + 9 * GiB + 64 * MiB, "rw-p", "", 2048),
      mapping(base + 9 * GiB + 64 * MiB, base + 18 * GiB, "---p", "", 0),
      mapping(base + 20 * GiB, base + 20 * GiB + 32 * MiB, "rw-p", "", 10 * 1024),
      mapping(base + 20 * GiB + 32 * MiB, base + 20 * GiB + 64 * MiB, "---p", "", 0),
      mapping(base + 21 * GiB, base + 21 * GiB + 512 * MiB, "rwxp", "", 6 * 1024),
    ].join("\n");
    expect(partsOf(text)).toEqual({
      wasmMemoriesMb: [30, 2],
      compiledCodeMb: 6,
      filesMb: 4,
      // The [heap] and the arena whose reservation is only 64 MB.
      otherAnonymousMb: 11,
    });
  });

  it("adds up to this process's resident memory", () => {
    const parts = memoryParts(process.pid);
    const total =
      parts.wasmMemoriesMb.reduce((a, b) => a + b, 0) +
      parts.compiledCodeMb +
      parts.filesMb +
      parts.otherAnonymousMb;
    expect(parts.filesMb).toBeGreaterThan(0);
    expect(parts.otherAnonymousMb).toBeGreaterThan(0);
    // Read a moment apart from the smaps above: within a few MB of each other.
    const rssMb = process.memoryUsage().rss / MiB;
    expect(Math.abs(total - rssMb)).toBeLessThan(Math.max(8, rssMb * 0.05));
  });
});
