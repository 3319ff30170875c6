// One scenario in a Node process of its own (bench/run.ts starts it):
//   node bench/lib/run-scenario.ts <name> <quick|normal> [args...]
// Runs it, writes bench/results/<name>-<timestamp>.json, exits 1 on a failure or failed check.
import { scenarios } from "../scenarios/index.ts";
import { buildInfo, machineAtStart, type ResultFile, writeResult } from "./results.ts";
import { round } from "./stats.ts";

const [name, mode, ...args] = process.argv.slice(2);
const scenario = scenarios.find((s) => s.name === name);
if (!scenario) throw new Error(`no scenario ${name}`);
const quick = mode === "quick";
const quietWait = process.env.BENCH_QUIET_WAIT_SECONDS;
const file: ResultFile = {
  scenario: scenario.name,
  date: new Date().toISOString(),
  quick,
  durationSeconds: 0,
  machine: machineAtStart(),
  build: buildInfo(),
  settings: scenario.settings({ quick, args }),
  problems: [],
  result: null,
};
const t0 = performance.now();
try {
  file.result = await scenario.run({
    settings: file.settings as object,
    quick,
    check(ok, problem) {
      if (!ok) {
        file.problems.push(problem);
        console.log(`  CHECK FAILED: ${problem}`);
      }
      return ok;
    },
    quiet: {
      quietWaitSeconds: quietWait ? Number(quietWait) : quick ? 0 : 60,
      disturbedPercent: Number(process.env.BENCH_DISTURBED_PERCENT ?? 5),
      retries: quick ? 0 : 2,
    },
  });
} catch (err) {
  console.error(err);
  file.error = String((err as Error)?.stack ?? err);
}
file.durationSeconds = round((performance.now() - t0) / 1000, 1);
const path = writeResult(file);
console.log(`${scenario.name}: ${file.durationSeconds} s; wrote ${path}`);
for (const p of file.problems) console.log(`problem: ${p}`);
// Some clients (PGlite, the database pools of a failed run) keep the loop alive: end here.
process.exit(file.error !== undefined || file.problems.length > 0 ? 1 : 0);
