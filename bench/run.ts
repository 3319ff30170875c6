// npm run bench: every scenario of bench/scenarios/, one after the other (they share the
// machine), each in a Node process of its own; then docs/benchmarks.md is regenerated from the
// latest result of each scenario.
//
//   npm run bench                               all scenarios
//   npm run bench -- verify door fixed-rate     one scenario, with its words (here: two parts)
//   npm run bench -- keys verify-ab ../a ../b   several: the words after a name are its own
//   npm run bench -- --quick [names...]         short durations: a smoke run
//   npm run bench -- report                     only regenerate docs/benchmarks.md
//   npm run bench -- list                       the scenarios and what they measure
//
// Results: bench/results/<scenario>-<timestamp>.json (git-ignored).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { docsPage, updateDocs } from "./lib/report.ts";
import { round } from "./lib/stats.ts";
import { scenarios } from "./scenarios/index.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const words = argv.filter((a) => a !== "--quick");

if (words[0] === "list") {
  for (const s of scenarios) console.log(`${s.name.padEnd(16)} ${s.description}`);
  process.exit(0);
}

function report(): void {
  const r = updateDocs(scenarios);
  console.log(`\n${docsPage}: regenerated ${r.updated.join(", ") || "nothing"}`);
  if (r.noResult.length > 0) console.log(`  no result yet: ${r.noResult.join(", ")}`);
  if (r.noSection.length > 0) console.log(`  no section on the page: ${r.noSection.join(", ")}`);
}

if (words[0] === "report") {
  report();
  process.exit(0);
}

/** The chosen scenarios, each with the words that follow its name. */
const chosen: { name: string; args: string[] }[] = [];
for (const word of words) {
  if (scenarios.some((s) => s.name === word)) chosen.push({ name: word, args: [] });
  else if (chosen.length > 0) chosen.at(-1)?.args.push(word);
  else throw new Error(`unknown scenario ${word}: npm run bench -- list`);
}
const runs = chosen.length > 0 ? chosen : scenarios.map((s) => ({ name: s.name, args: [] }));

const one = fileURLToPath(new URL("./lib/run-scenario.ts", import.meta.url));
const times: string[] = [];
let failed = 0;
for (const { name, args } of runs) {
  const scenario = scenarios.find((s) => s.name === name);
  console.log(`\n##### ${name}${args.length > 0 ? ` ${args.join(" ")}` : ""}`);
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [...(scenario?.nodeArgs ?? []), one, name, quick ? "quick" : "normal", ...args],
    { stdio: "inherit" },
  );
  const seconds = round((performance.now() - t0) / 1000, 1);
  times.push(`${name}: ${seconds} s${r.status === 0 ? "" : ` (exit ${r.status})`}`);
  if (r.status !== 0) failed++;
}
report();
console.log(`\n${times.join("\n")}`);
process.exit(failed > 0 ? 1 : 0);
