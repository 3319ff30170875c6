/** Something text is written to: a stream, a pino destination, or a test's buffer. */
export interface Writer {
  write(text: string): unknown;
}

/**
 * What a command reads its settings from and writes its answers to. The bin passes the
 * process's own; tests pass an environment of their choosing and buffers, so that parsing,
 * help and refusals are checked in the test's process instead of a new one each time.
 */
export interface Io {
  env: Record<string, string | undefined>;
  /** The command's answer (and serve's log). */
  stdout: Writer;
  /** Failures, and the log of the admin commands (their stdout is the answer). */
  stderr: Writer;
}

/** Writes `text` and a line end. */
export function writeLine(to: Writer, text: string): void {
  to.write(`${text}\n`);
}
