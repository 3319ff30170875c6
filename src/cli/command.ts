import { parseArgs } from "node:util";
import { closest } from "../domain/closest.js";
import type { Io } from "./io.js";

/** A mistake in the command line: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** One option of a command, as node:util parseArgs takes it, with its help. */
export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  /** The placeholder of its value in help: `--workspace ID`. */
  value?: string;
  help: string;
}

/** What a command receives: its options by name, and its positional arguments. */
export interface Parsed {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/** One `latchkey` command: `serve`, `root-key create`, ... */
export interface Command {
  /** The words that name it: `root-key create`. */
  name: string;
  /** What follows the name in the usage line: `ID`, `[--name NAME]`. */
  usage: string;
  summary: string;
  /** More lines of help, after the summary. */
  details?: string;
  options: Record<string, OptionSpec>;
  /** The positional arguments it takes, by name (checked: none more). */
  positionals?: string[];
  run(parsed: Parsed, io: Io): Promise<void>;
}

const HELP_OPTION: OptionSpec = { type: "boolean", help: "show this help" };

/** The first line of a parseArgs error, in our words where they are clearer. */
function usageError(command: Command, err: Error & { code?: string }): UsageError {
  const where = `latchkey ${command.name}`;
  if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const option = /'([^']+)'/.exec(err.message)?.[1] ?? "";
    const known = Object.keys(command.options).map((o) => `--${o}`);
    const near = closest(option, known, 3);
    return new UsageError(
      `unknown option '${option}' for '${where}'${near ? `; did you mean ${near}?` : ""} (${where} --help lists them)`,
    );
  }
  return new UsageError(`${where}: ${err.message.split(/(?<=\.) /)[0]}`);
}

/** Parses a command's arguments strictly: an unknown option or extra argument is refused. */
export function parseCommand(command: Command, args: string[]): Parsed & { help: boolean } {
  const options = Object.fromEntries(
    Object.entries({ ...command.options, help: HELP_OPTION }).map(([name, o]) => [
      name,
      { type: o.type, multiple: o.multiple ?? false, ...(name === "help" ? { short: "h" } : {}) },
    ]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw usageError(command, err as Error);
  }
  const { help, ...values } = parsed.values;
  const allowed = command.positionals ?? [];
  const extra = parsed.positionals[allowed.length];
  if (help !== true && extra !== undefined) {
    throw new UsageError(`unexpected argument '${extra}' for 'latchkey ${command.name}'`);
  }
  return { values, positionals: parsed.positionals, help: help === true };
}

/** The help of one command: usage line, summary, options. */
export function commandHelp(command: Command): string {
  const lines = [`Usage: latchkey ${command.name} ${command.usage}`.trimEnd(), "", command.summary];
  if (command.details) lines.push("", command.details);
  lines.push("", "Options:");
  for (const [name, o] of Object.entries({ ...command.options, help: HELP_OPTION })) {
    const flag = `${name === "help" ? "-h, " : ""}--${name}${o.value ? ` ${o.value}` : ""}`;
    lines.push(`  ${flag}`, `      ${o.help}`);
  }
  return lines.join("\n");
}
