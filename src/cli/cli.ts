import { closest } from "../domain/closest.js";
import { type Command, commandHelp, parseCommand, UsageError } from "./command.js";
import { migrateCommand } from "./database.js";
import { describeFailure } from "./failure.js";
import { type Io, writeLine } from "./io.js";
import { rootKeyCommands } from "./root-key.js";
import { serveCommand } from "./serve.js";
import { packageVersion } from "./version.js";
import { workspaceCommands } from "./workspace.js";

const COMMANDS: Command[] = [
  serveCommand,
  migrateCommand,
  ...workspaceCommands,
  ...rootKeyCommands,
];
/** The first words of commands that have several: `root-key` → create, list, revoke. */
const GROUPS = new Set(
  COMMANDS.filter((c) => c.name.includes(" ")).map((c) => c.name.split(" ")[0]),
);

const HELP = `latchkey: an API key management service

Usage: latchkey <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(18)}${c.summary}`).join("\n")}
  help <command>    the help of a command (or: latchkey <command> --help)

Options: -h, --help (this help), --version (the version).
Settings come from the environment or from serve's options (see latchkey serve --help).`;

function groupHelp(group: string): string {
  const members = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  return [
    `Usage: latchkey ${group} <${members.map((c) => c.name.split(" ")[1]).join("|")}> [options]`,
    "",
    ...members.map((c) => `  ${c.name.padEnd(18)}${c.summary}`),
  ].join("\n");
}

/** The command the words name, with the arguments after its name; a UsageError otherwise. */
function find(words: string[]): { command: Command; rest: string[] } {
  const [first = "", second] = words;
  const two = COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (two) return { command: two, rest: words.slice(2) };
  const one = COMMANDS.find((c) => c.name === first);
  if (one) return { command: one, rest: words.slice(1) };
  if (GROUPS.has(first)) {
    const subcommands = COMMANDS.filter((c) => c.name.startsWith(`${first} `)).map(
      (c) => c.name.split(" ")[1] as string,
    );
    const what = second === undefined ? "needs a subcommand" : `has no subcommand '${second}'`;
    const near = second === undefined ? undefined : closest(second, subcommands, 3);
    throw new UsageError(
      `'latchkey ${first}' ${what}${near ? `; did you mean ${near}?` : ""} (one of: ${subcommands.join(", ")})`,
    );
  }
  const kind = first.startsWith("-") ? "option" : "command";
  const names =
    kind === "option"
      ? ["--help", "--version"]
      : [...COMMANDS.map((c) => c.name.split(" ")[0] as string), "help"];
  const near = closest(first, new Set(names), 3);
  throw new UsageError(
    `unknown ${kind} '${first}'${near ? `; did you mean ${near}?` : ""} (latchkey --help lists them)`,
  );
}

/** Help for `latchkey help [words]`: the whole CLI, a group, or one command. */
function helpFor(words: string[]): string {
  if (words.length === 0) return HELP;
  if (words.length === 1 && GROUPS.has(words[0] as string)) return groupHelp(words[0] as string);
  const { command, rest } = find(words);
  if (rest.length > 0) throw new UsageError(`no help for '${words.join(" ")}'`);
  return commandHelp(command);
}

async function run(argv: string[], io: Io): Promise<void> {
  const [first] = argv;
  const print = (text: string) => writeLine(io.stdout, text);
  if (first === undefined || first === "-h" || first === "--help") return print(HELP);
  if (first === "--version") return print(packageVersion());
  if (first === "help") return print(helpFor(argv.slice(1)));
  if (GROUPS.has(first) && (argv[1] === "-h" || argv[1] === "--help")) {
    return print(groupHelp(first));
  }
  const { command, rest } = find(argv);
  const parsed = parseCommand(command, rest);
  if (parsed.help) return print(commandHelp(command));
  await command.run(parsed, io);
}

/**
 * Runs `latchkey <argv>` and resolves with its exit code: 0 once the command has done its
 * work (for serve: once it listens), else the failure's code after one line on stderr.
 */
export async function runCli(argv: string[], io: Io): Promise<number> {
  try {
    await run(argv, io);
    return 0;
  } catch (err) {
    const failure = describeFailure(err);
    writeLine(io.stderr, failure.text);
    return failure.exitCode;
  }
}
