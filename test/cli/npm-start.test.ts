import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MIGRATIONS = readdirSync(join(ROOT, "src/storage/migrations")).sort();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** Runs an npm script in `cwd`; resolves with its exit code and output. */
function npm(cwd: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn("npm", args, { cwd, env: { ...process.env, ...env } });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c;
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c;
  });
  const done = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, output: () => out, done };
}

async function until(condition: () => boolean, child: ChildProcess): Promise<boolean> {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline && child.exitCode === null) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return condition();
}

// npm and the build are the same on both engines: these run once (ENGINE_INDEPENDENT).
describe("npm start", { timeout: 300_000 }, () => {
  beforeAll(() => {
    // What `npm test` does first (pretest): dist/ is up to date from here on.
    const built = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: ROOT });
    expect(built.status, String(built.stderr)).toBe(0);
  }, 300_000);

  it("with dist/ up to date, starts without building", async () => {
    const outputs = ["dist/src/cli/main.js", "dist/src/storage/migrations/0001_init.sql"];
    const before = outputs.map((f) => statSync(join(ROOT, f)).mtimeMs);
    const t0 = performance.now();
    const start = npm(ROOT, ["start"], {
      PORT: "0",
      GRPC_PORT: "off",
      ADMIN_PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: tempDir("latchkey-npm-start-"),
      ROOT_KEY: "npm_start_root_key_0123456789",
    });
    try {
      expect(await until(() => /latchkey listening/.test(start.output()), start.child)).toBe(true);
      console.log(`npm start listened after ${Math.round(performance.now() - t0)} ms`);
      expect(start.output()).not.toContain("latchkey: building dist/");
      expect(outputs.map((f) => statSync(join(ROOT, f)).mtimeMs)).toEqual(before);
    } finally {
      // npm runs the server under a shell: stop the server itself, by the pid it logs.
      const pid = Number(/"pid":(\d+)/.exec(start.output())?.[1]);
      if (pid) process.kill(pid, "SIGTERM");
      else start.child.kill("SIGKILL");
      await start.done;
    }
  });

  it("two starts sharing a stale checkout: one builds, the other waits, and dist/ never lacks a migration", async () => {
    const copy = tempDir("latchkey-checkout-");
    for (const path of [
      "src",
      "gen",
      "scripts",
      "package.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "packages/client",
      "packages/console",
    ])
      cpSync(join(ROOT, path), join(copy, path), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    // A dist/ from an earlier build: the copied sources are newer, so it is stale.
    cpSync(join(ROOT, "dist"), join(copy, "dist"), { recursive: true });
    const migrations = join(copy, "dist/src/storage/migrations");
    const complete = () => {
      const present = readdirSync(migrations)
        .filter((f) => f.endsWith(".sql"))
        .sort();
      return (
        present.join() === MIGRATIONS.join() &&
        present.every(
          (f) =>
            readFileSync(join(migrations, f), "utf8") ===
            readFileSync(join(ROOT, "src/storage/migrations", f), "utf8"),
        )
      );
    };
    const builds = [npm(copy, ["run", "prestart"]), npm(copy, ["run", "prestart"])];
    let checks = 0;
    let lacking = 0;
    while (builds.some((b) => b.child.exitCode === null)) {
      checks++;
      if (!complete()) lacking++;
      await new Promise((r) => setTimeout(r, 5));
    }
    const codes = await Promise.all(builds.map((b) => b.done));
    const outputs = builds.map((b) => b.output());
    console.log(`${checks} checks of dist/ while the two ran`);
    expect(codes).toEqual([0, 0]);
    expect(lacking).toBe(0);
    expect(outputs.filter((o) => o.includes("latchkey: building dist/"))).toHaveLength(1);
    expect(complete()).toBe(true);

    // Up to date now: a third start does not build.
    const third = npm(copy, ["run", "prestart"]);
    expect(await third.done).toBe(0);
    expect(third.output()).not.toContain("latchkey: building dist/");
  }, 300_000);
});
