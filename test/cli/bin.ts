import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built CLI, run as a stranger runs it; `npm test` builds it first (pretest). */
export const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

function checkBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' (npm test does)`);
}

/** A clean environment: PATH and what the test gives, nothing of the test runner's. */
function environment(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", ...env };
}

/** Runs `latchkey <args>` to its end. */
export function latchkey(args: string[], env: Record<string, string> = {}) {
  checkBuilt();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: environment(env),
    encoding: "utf8",
    timeout: 240_000,
  });
  return {
    code: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    ms: performance.now() - t0,
  };
}

/** A `latchkey serve` process, with everything it printed on stdout and stderr. */
export interface Serving {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** The main port from the "latchkey listening" line, once it was printed. */
  port(): number | undefined;
  /** Resolves once it says it listens (true), or exits or the deadline passes (false). */
  listening(deadlineMs?: number): Promise<boolean>;
  /** Resolves with its exit code (or signal), or "running" after `deadlineMs`. */
  exited(deadlineMs?: number): Promise<number | string | null>;
  /** SIGTERM, then waits for the exit; SIGKILL when it does not come. */
  stop(): Promise<number | string | null>;
}

/** Starts `latchkey serve <args>` (or other args) with its output piped. */
export function startLatchkey(args: string[], env: Record<string, string>): Serving {
  checkBuilt();
  const child = spawn(process.execPath, [CLI, ...args], { env: environment(env) });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c;
  });
  child.stderr.on("data", (c: Buffer) => {
    err += c;
  });
  const exit = new Promise<number | string | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal)),
  );
  const port = () => {
    const m = /"port":(\d+)[^\n]*"msg":"latchkey listening"/.exec(out);
    return m ? Number(m[1]) : undefined;
  };
  const exited = (deadlineMs = 180_000) =>
    Promise.race([exit, new Promise<string>((r) => setTimeout(() => r("running"), deadlineMs))]);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    port,
    async listening(deadlineMs = 180_000) {
      const until = performance.now() + deadlineMs;
      while (performance.now() < until) {
        if (port() !== undefined) return true;
        if (child.exitCode !== null || child.signalCode !== null) return false;
        await new Promise((r) => setTimeout(r, 25));
      }
      return false;
    },
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const code = await exited(30_000);
      if (code === "running") child.kill("SIGKILL");
      return code;
    },
  };
}
