// docs/benchmarks.md's generated sections: between `<!-- bench:<scenario> -->` and
// `<!-- /bench:<scenario> -->`, rendered from the latest result file of each scenario. The
// prose around them is hand-written and left alone.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./dist.ts";
import { latestResult, type ResultFile, resultsDir } from "./results.ts";
import type { Scenario } from "./scenario.ts";

export const docsPage = join(projectRoot, "docs/benchmarks.md");
export const docsImages = join(projectRoot, "docs/images");

const MARKER = /<!-- (\/?)bench:([a-z0-9-]+) -->/g;

/**
 * The generated sections of a page by scenario name (their text between the markers).
 * Throws on a marker without its pair, nested or crossed markers, or a scenario twice.
 */
export function parseSections(page: string): Map<string, string> {
  const sections = new Map<string, string>();
  let open: { name: string; end: number } | undefined;
  for (const m of page.matchAll(MARKER)) {
    const [text, closing, name = ""] = m;
    const at = m.index ?? 0;
    if (!closing) {
      if (open) throw new Error(`bench:${name} opens inside bench:${open.name}`);
      if (sections.has(name)) throw new Error(`bench:${name} appears twice`);
      open = { name, end: at + text.length };
    } else {
      if (open?.name !== name) throw new Error(`/bench:${name} closes what it did not open`);
      sections.set(name, page.slice(open.end, at).replace(/^\n/, "").replace(/\n$/, ""));
      open = undefined;
    }
  }
  if (open) throw new Error(`bench:${open.name} is never closed`);
  return sections;
}

/** The page with the sections named in `sections` replaced (the others kept). */
export function replaceSections(page: string, sections: Map<string, string>): string {
  parseSections(page);
  return page.replace(
    /(<!-- bench:([a-z0-9-]+) -->)[\s\S]*?(<!-- \/bench:\2 -->)/g,
    (whole, open: string, name: string, close: string) => {
      const text = sections.get(name);
      return text === undefined ? whole : `${open}\n${text}\n${close}`;
    },
  );
}

const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

function settingsText(settings: unknown): string {
  return Object.entries(settings as Record<string, unknown>)
    .map(
      ([k, v]) =>
        `${k} ${Array.isArray(v) ? v.join(",") : typeof v === "object" ? JSON.stringify(v) : v}`,
    )
    .join(", ");
}

/**
 * The line that says which run a section comes from: date, machine, commit and settings. It
 * names no result file: those stay on the machine that ran them, out of the repository.
 */
export function runLine(file: ResultFile): string {
  const m = file.machine;
  const quick = file.quick
    ? "**quick run** (`--quick`: the short durations in its settings; a smoke test), "
    : "";
  return (
    `_Run of ${when(file.date)}, ${quick}${file.durationSeconds} s; ${m.cpus} cores` +
    `${m.model ? ` (${m.model.trim()})` : ""}, Node ${m.node}, load average ${m.loadAverage.start}` +
    ` at the start and ${m.loadAverage.end} at the end; commit ${file.build.commit ?? "?"}` +
    `${file.build.srcChanged ? " with src/ changed" : ""}. Settings: ${settingsText(file.settings)}.` +
    `${file.problems.length > 0 ? ` Failed checks: ${file.problems.length}.` : ""}_`
  );
}

/** A section from one result: its run line, then the scenario's own rendering. */
export function renderSection<S extends object, R>(
  scenario: Scenario<S, R>,
  file: ResultFile<S, R>,
  fileName: string,
): string {
  if (file.result === null) throw new Error(`${fileName} has no result`);
  const problems = file.problems.map((p) => `- failed check: ${p}`).join("\n");
  return [runLine(file), scenario.render(file.result, file.settings), problems]
    .filter((part) => part !== "")
    .join("\n\n");
}

/**
 * Rewrites the page's sections from the latest result of each scenario (and writes the images
 * they draw); a section without a result is left as it is. Returns what it did.
 */
export function updateDocs(
  scenarios: readonly Scenario<object, unknown>[],
  options: { page?: string; results?: string; images?: string } = {},
): { updated: string[]; noResult: string[]; noSection: string[] } {
  const pagePath = options.page ?? docsPage;
  const page = readFileSync(pagePath, "utf8");
  const present = parseSections(page);
  const sections = new Map<string, string>();
  const out = { updated: [] as string[], noResult: [] as string[], noSection: [] as string[] };
  for (const scenario of scenarios) {
    if (!present.has(scenario.name)) {
      out.noSection.push(scenario.name);
      continue;
    }
    const latest = latestResult(scenario.name, options.results ?? resultsDir);
    const file = latest?.file as ResultFile<object, unknown> | undefined;
    if (!latest || !file?.result) {
      out.noResult.push(scenario.name);
      continue;
    }
    sections.set(scenario.name, renderSection(scenario, file, latest.name));
    for (const image of scenario.images?.(file.result, file.settings) ?? []) {
      const dir = options.images ?? docsImages;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, image.file), image.png);
    }
    out.updated.push(scenario.name);
  }
  writeFileSync(pagePath, replaceSections(page, sections));
  return out;
}
