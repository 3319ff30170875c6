import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { runCli } from "../../src/cli/cli.js";
import { createLogger, type Logger } from "../../src/log.js";

/** What `latchkey <args>` printed and how it ended, run in this process. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `latchkey <args>` in this process, with only `env` as its environment and its output
 * captured: the same code as the bin, without a process start per call. Commands that
 * start a server are run as processes instead (bin.test.ts): a started server is not stopped.
 */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** A logger whose JSON lines are kept, to read what a start logged. */
export function capturedLogger(level = "info"): { log: Logger; lines: () => string } {
  let text = "";
  const log = createLogger(level, { write: (line: string) => (text += line) });
  return { log, lines: () => text };
}

/** The settings of a start in a test: free loopback ports, no gRPC port, info logs. */
export const TEST_START_ENV = {
  PORT: "0",
  GRPC_PORT: "off",
  ADMIN_PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "info",
} as const;

/** Makes temporary directories named `prefix…`, all removed when the test file ends. */
export function scratchDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}

/** Polls `text` until `pattern` appears in it, or 180 s pass. */
export async function appears(text: () => string, pattern: RegExp): Promise<boolean> {
  const until = performance.now() + 180_000;
  while (performance.now() < until) {
    if (pattern.test(text())) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}
