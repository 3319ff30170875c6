import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built CLI; `npm test` builds it first (pretest). */
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

/** One Latchkey process started by a test. */
export interface NodeProcess {
  url: string;
  port: number;
  /** The admin listener's base URL: /metrics, /health/live, /health/ready. */
  adminUrl: string;
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends a signal and waits for the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Options of the processes. */
export interface NodeOptions {
  databaseUrl: string;
  env?: Record<string, string>;
  /**
   * The environment's root key of the process (ROOT_KEY). Such a key lives in the memory of
   * each process that has it, never in the database, so every node a test calls with the
   * test server's root key must be given it.
   */
  rootKey?: string;
  /** Milliseconds to wait for each process to listen. */
  startTimeoutMs?: number;
}

/** Starts one Latchkey process and resolves once it listens. */
export function startNode(opts: NodeOptions): Promise<NodeProcess> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' (npm test does)`);
  const child = spawn(process.execPath, [CLI, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: opts.databaseUrl,
      PORT: "0",
      GRPC_PORT: "0",
      ADMIN_PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      SHUTDOWN_TIMEOUT_MS: "5000",
      ...(opts.rootKey === undefined ? {} : { ROOT_KEY: opts.rootKey }),
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`latchkey did not listen within ${opts.startTimeoutMs ?? 30_000} ms:\n${out}`),
      );
    }, opts.startTimeoutMs ?? 30_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"port":(\d+)[^\n]*"adminPort":(\d+)[^\n]*"msg":"latchkey listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        const port = Number(m[1]);
        resolve({
          url: `http://127.0.0.1:${port}`,
          port,
          adminUrl: `http://127.0.0.1:${m[2]}`,
          child,
          output: () => out,
          stop(signal = "SIGTERM") {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`latchkey exited with ${code} before listening:\n${out}`));
    });
  });
}

/** Starts `n` Latchkey processes on one PostgreSQL database, each on its own port. */
export function startNodes(n: number, opts: NodeOptions): Promise<NodeProcess[]> {
  return Promise.all(Array.from({ length: n }, () => startNode(opts)));
}
