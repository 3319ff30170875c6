import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  docsPage,
  parseSections,
  renderSection,
  replaceSections,
  updateDocs,
} from "../../../bench/lib/report.ts";
import type { ResultFile } from "../../../bench/lib/results.ts";
import decodeValidate, {
  type DecodeValidateResult,
  type DecodeValidateSettings,
} from "../../../bench/scenarios/decode-validate.ts";
import { scenarios } from "../../../bench/scenarios/index.ts";

const fixture: ResultFile<DecodeValidateSettings, DecodeValidateResult> = {
  scenario: "decode-validate",
  date: "2026-11-28T01:02:03.456Z",
  quick: true,
  durationSeconds: 12.5,
  machine: { cpus: 2, model: "Test CPU", node: "v24.21.0", loadAverage: { start: 6.5, end: 7.25 } },
  build: { commit: "abc1234", srcChanged: false, distBuiltAt: "2026-11-28T00:00:00.000Z" },
  settings: { runs: 5 },
  problems: [],
  result: {
    runs: [
      {
        body: "migrateKeys, lists at their maximum",
        door: "/v2 JSON",
        bytes: 820_348,
        verdict: "valid",
        workMedianMs: 12.34,
        workMinMs: 10.5,
        parseMedianMs: 8.25,
      },
    ],
  },
};
const FILE = "decode-validate-2026-11-28T01-02-03.json";

const page = (inner = "") =>
  `# Benchmarks\n\nProse.\n\n<!-- bench:decode-validate -->\n${inner}<!-- /bench:decode-validate -->\n\nMore prose.\n`;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the benchmarks page's generated sections", () => {
  it("renders a section from a result: the run's date, machine, settings and figures", () => {
    const text = renderSection(decodeValidate, fixture, FILE);
    expect(text).toContain("2026-11-28 01:02 UTC");
    expect(text).toContain("quick run");
    expect(text).toContain("2 cores (Test CPU), Node v24.21.0, load average 6.5");
    expect(text).toContain("Settings: runs 5.");
    expect(text).toContain("commit ");
    expect(text).not.toContain("bench/results/");
    expect(text).toContain("| migrateKeys, lists at their maximum | /v2 JSON | 820,348 | valid |");
    expect(text).toContain("12.3 ms (10.5 ms)");
  });

  it("replaces only the generated text, keeps the prose, and the result parses again", () => {
    const section = renderSection(decodeValidate, fixture, FILE);
    const once = replaceSections(page("old figures\n"), new Map([["decode-validate", section]]));
    expect(once.startsWith("# Benchmarks\n\nProse.\n\n")).toBe(true);
    expect(once.endsWith("\n\nMore prose.\n")).toBe(true);
    expect(once).not.toContain("old figures");
    expect(parseSections(once).get("decode-validate")).toBe(section);
    // Rendering again is stable: the page does not grow.
    expect(replaceSections(once, new Map([["decode-validate", section]]))).toBe(once);
  });

  it("refuses markers without their pair, crossed or repeated", () => {
    expect(() => parseSections("<!-- bench:a -->")).toThrow(/never closed/);
    expect(() => parseSections("<!-- /bench:a -->")).toThrow(/did not open/);
    expect(() => parseSections("<!-- bench:a --><!-- bench:b --><!-- /bench:b -->")).toThrow(
      /inside/,
    );
    const twice = "<!-- bench:a --><!-- /bench:a --><!-- bench:a --><!-- /bench:a -->";
    expect(() => parseSections(twice)).toThrow(/twice/);
  });

  it("rewrites a page from the latest result file of each scenario", () => {
    const dir = mkdtempSync(join(tmpdir(), "latchkey-bench-report-"));
    dirs.push(dir);
    const older = { ...fixture, date: "2026-11-27T01:02:03.456Z", settings: { runs: 99 } };
    writeFileSync(join(dir, "decode-validate-2026-11-27T01-02-03.json"), JSON.stringify(older));
    writeFileSync(join(dir, FILE), JSON.stringify(fixture));
    writeFileSync(join(dir, "benchmarks.md"), page());
    const r = updateDocs([decodeValidate], {
      page: join(dir, "benchmarks.md"),
      results: dir,
      images: join(dir, "images"),
    });
    expect(r.updated).toEqual(["decode-validate"]);
    const section = parseSections(readFileSync(join(dir, "benchmarks.md"), "utf8")).get(
      "decode-validate",
    );
    expect(section).toContain("Settings: runs 5.");
  });

  it("docs/benchmarks.md parses and has a section for every scenario", () => {
    const sections = parseSections(readFileSync(docsPage, "utf8"));
    expect([...sections.keys()].sort()).toEqual(scenarios.map((s) => s.name).sort());
  });
});
