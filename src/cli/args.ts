import { AdminError } from "../admin/commands.js";

/** Parsed command-line arguments: positionals and `--name value` / `--flag` options. */
export interface Args {
  positional: string[];
  /** The last value of an option, if given. */
  one(name: string): string | undefined;
  /** Every value of a repeatable option. */
  many(name: string): string[];
  /** True when a value-less option is present. */
  flag(name: string): boolean;
}

const FLAGS = new Set(["all"]);

/** Parses `argv` (without node and the script). Options take the next word as value. */
export function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  const options = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (!word.startsWith("--")) {
      positional.push(word);
      continue;
    }
    const [name, inline] = word.slice(2).split("=", 2) as [string, string | undefined];
    const values = options.get(name) ?? [];
    if (inline !== undefined) values.push(inline);
    else if (FLAGS.has(name)) values.push("true");
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--"))
        throw new AdminError(`--${name} needs a value`);
      values.push(next);
      i++;
    }
    options.set(name, values);
  }
  return {
    positional,
    one: (name) => options.get(name)?.at(-1),
    many: (name) => options.get(name) ?? [],
    flag: (name) => options.has(name),
  };
}
