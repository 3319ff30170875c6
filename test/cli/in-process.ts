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
