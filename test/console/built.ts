import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const ROOT = new URL("../..", import.meta.url).pathname;

/**
 * Builds the console when its build is missing or older than its sources (what `npm test`'s
 * pretest does), so that a test file run on its own serves the current console.
 */
export function ensureConsoleBuilt(): void {
  execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (!existsSync(`${ROOT}packages/console/dist/index.html`))
    throw new Error("the console build left no packages/console/dist/index.html");
}
