// Builds dist/ from src/ and gen/, packages/client/dist/ (the @latchkey/client package,
// compiled from its src/ and the same gen/), and dist/console/ (the web console, bundled by
// Vite from packages/console/ and the same gen/): `npm run build` always, `npm start`
// (prestart) and `npm test` (pretest) only when dist/ is missing or older than its sources,
// so a start with an up-to-date dist/ costs a few milliseconds here instead of a compilation.
// The server and the console have stamps of their own: a change to one rebuilds only it.
//
// Processes sharing a checkout may start together: builds take a lock (dist/.build-lock),
// and the one that waited finds dist/ fresh and does not build again. Files are replaced
// whole (written aside, then renamed), never deleted and copied, so a server reading
// dist/ while another process builds it never finds a migration missing or half written.
//
//   node scripts/build.mjs [--if-stale]
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = join(ROOT, "dist");
const STAMP = join(DIST, ".build-stamp");
const LOCK = join(DIST, ".build-lock");
/** What dist/ is made from: a change to any of these (or a file added or removed) rebuilds. */
const INPUTS = [
  "src",
  "gen",
  "tsconfig.json",
  "tsconfig.build.json",
  "scripts/build.mjs",
  "packages/client/src",
  "packages/client/tsconfig.json",
];
/** The compilations, each a tsconfig that emits. */
const PROJECTS = ["tsconfig.build.json", "packages/client/tsconfig.json"];
/** Files the compiler does not emit, copied as they are. */
const COPIES = [
  ["src/storage/migrations", "dist/src/storage/migrations"],
  ["gen/openapi", "dist/gen/openapi"],
];
const LOCK_WAIT_MS = 10 * 60_000;
/** The console: its stamp, what it is made from, and where Vite writes it before the copy. */
const CONSOLE_STAMP = join(DIST, ".console-stamp");
const CONSOLE_INPUTS = [
  "gen/latchkey",
  "scripts/build.mjs",
  "packages/console/src",
  "packages/client/src",
  "packages/console/index.html",
  "packages/console/vite.config.ts",
  "packages/console/package.json",
];
const CONSOLE_BUILT = join(ROOT, "packages/console/dist");
const CONSOLE_DIST = join(DIST, "console");

/** The newest modification time under `path`; directories count (an entry removed). */
function newestMtime(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  let newest = stat.mtimeMs;
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path))
      newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

function newestInput(inputs = INPUTS) {
  return Math.max(...inputs.map((p) => newestMtime(join(ROOT, p))));
}

/** True when the last build (of the server, or with a stamp and inputs given, the console) saw every input as it is now. */
function fresh(stamp = STAMP, inputs = INPUTS) {
  try {
    const { inputsAt } = JSON.parse(readFileSync(stamp, "utf8"));
    return typeof inputsAt === "number" && newestInput(inputs) <= inputsAt;
  } catch {
    return false;
  }
}

const consoleFresh = () =>
  fresh(CONSOLE_STAMP, CONSOLE_INPUTS) && existsSync(join(CONSOLE_DIST, "index.html"));

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/** Takes dist/.build-lock, waiting for a live holder and taking over from a dead one. */
async function lock() {
  mkdirSync(DIST, { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  let told = false;
  for (;;) {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: "wx" });
      return () => rmSync(LOCK, { force: true });
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
    }
    let holder;
    try {
      holder = Number(readFileSync(LOCK, "utf8"));
    } catch (err) {
      if (err.code === "ENOENT") continue; // released meanwhile
      throw err;
    }
    if (!Number.isInteger(holder) || holder <= 0 || !alive(holder)) {
      rmSync(LOCK, { force: true }); // left by a build that died
      continue;
    }
    if (Date.now() > deadline) throw new Error(`dist/ is still being built by process ${holder}`);
    if (!told) console.error(`latchkey: dist/ is being built by process ${holder}; waiting`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Writes `to` whole: a copy under another name, renamed over it. */
function replaceFile(from, to) {
  const aside = `${to}.${process.pid}.partial`;
  copyFileSync(from, aside);
  renameSync(aside, to);
}

function copyDirectory(from, to) {
  mkdirSync(to, { recursive: true });
  const wanted = new Set(readdirSync(from));
  for (const name of wanted) replaceFile(join(from, name), join(to, name));
  // A file no longer in the source (a renamed migration) must not linger in dist/.
  for (const name of readdirSync(to))
    if (!wanted.has(name)) rmSync(join(to, name), { force: true });
}

/** Compiles and copies; false when the compiler failed (it has said why). */
function build() {
  const inputsAt = newestInput();
  const tsc = join(ROOT, "node_modules/.bin/tsc");
  if (!existsSync(tsc)) throw new Error("node_modules/.bin/tsc is missing: run `npm ci` first");
  for (const project of PROJECTS) {
    const compiled = spawnSync(tsc, ["-p", project], { cwd: ROOT, stdio: "inherit" });
    if (compiled.status !== 0) return false;
  }
  for (const [from, to] of COPIES) copyDirectory(join(ROOT, from), join(ROOT, to));
  // The inputs' time as the build began: a file edited during the build makes the next
  // check rebuild.
  writeFileSync(STAMP, JSON.stringify({ inputsAt }));
  return true;
}

/**
 * Bundles the console with Vite (on the Node running this script) into packages/console/dist,
 * then copies it into dist/console: the hashed assets first, the entry page that names them
 * last, and only then are the assets of the build before removed, so a server reading
 * dist/console meanwhile finds every file its entry page names. False when Vite failed.
 */
function buildConsole() {
  const inputsAt = newestInput(CONSOLE_INPUTS);
  const vite = join(ROOT, "node_modules/vite/bin/vite.js");
  if (!existsSync(vite)) throw new Error("node_modules/vite is missing: run `npm ci` first");
  const built = spawnSync(
    process.execPath,
    [vite, "build", "--logLevel", "warn", "--config", "packages/console/vite.config.ts"],
    // Always the production build: Vite takes NODE_ENV from its environment, and a build
    // started inside the test runner (NODE_ENV=test) made React's development bundle.
    { cwd: ROOT, stdio: "inherit", env: { ...process.env, NODE_ENV: "production" } },
  );
  if (built.status !== 0) return false;
  const assets = join(CONSOLE_DIST, "assets");
  mkdirSync(assets, { recursive: true });
  const wanted = new Set(readdirSync(join(CONSOLE_BUILT, "assets")));
  for (const name of wanted) replaceFile(join(CONSOLE_BUILT, "assets", name), join(assets, name));
  replaceFile(join(CONSOLE_BUILT, "index.html"), join(CONSOLE_DIST, "index.html"));
  for (const name of readdirSync(assets))
    if (!wanted.has(name)) rmSync(join(assets, name), { force: true });
  writeFileSync(CONSOLE_STAMP, JSON.stringify({ inputsAt }));
  return true;
}

const ifStale = process.argv.includes("--if-stale");
if (!(ifStale && fresh() && consoleFresh())) {
  const unlock = await lock();
  try {
    // Another process may have built while this one waited.
    if (!(ifStale && fresh())) {
      if (ifStale) console.error("latchkey: building dist/ (missing or older than src/)");
      if (!build()) process.exitCode = 1;
    }
    if (process.exitCode !== 1 && !(ifStale && consoleFresh())) {
      if (ifStale)
        console.error("latchkey: building dist/console/ (missing or older than packages/console/)");
      if (!buildConsole()) process.exitCode = 1;
    }
  } finally {
    unlock();
  }
}
