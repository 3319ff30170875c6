import { AdminError } from "../admin/errors.js";
import { ConfigError } from "../config.js";
import { StartupError } from "../startup/wait.js";
import { DbUnavailableError } from "../storage/db.js";
import { DataDirInUseError } from "../storage/open.js";
import { UsageError } from "./command.js";
import { WorkersError } from "./worker-protocol.js";

/** How a failed command ends: what it prints on stderr, and its exit code. */
export interface Failure {
  text: string;
  exitCode: number;
}

/** A Node system error (listen EADDRINUSE, mkdir EACCES, ...): its message says it all. */
function isSystemError(err: unknown): err is Error & { syscall: string } {
  return err instanceof Error && typeof (err as { syscall?: unknown }).syscall === "string";
}

/**
 * What the operator reads when a command fails. A mistake of theirs (arguments, settings, a
 * locked DATA_DIR: exit 2) or of the surroundings (a database that stays away, a port in
 * use: exit 1) is one line naming it, never a stack trace or a connection URL. Anything
 * else is a fault of Latchkey's: one line, then the stack for the bug report.
 */
export function describeFailure(err: unknown): Failure {
  if (
    err instanceof UsageError ||
    err instanceof AdminError ||
    err instanceof ConfigError ||
    err instanceof DataDirInUseError
  ) {
    return { text: `latchkey: ${err.message}`, exitCode: 2 };
  }
  // The workers' failure carries the code its cause would have ended a single server with.
  if (err instanceof WorkersError)
    return { text: `latchkey: ${err.message}`, exitCode: err.exitCode };
  if (err instanceof StartupError || err instanceof DbUnavailableError || isSystemError(err)) {
    return { text: `latchkey: ${err.message}`, exitCode: 1 };
  }
  const stack = err instanceof Error ? (err.stack ?? err.message) : String(err);
  return { text: `latchkey: failed unexpectedly: ${stack}`, exitCode: 1 };
}
