/** A configuration value that cannot be used; the message names the variable or flag. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * One setting: an environment variable, and the `serve` flag derived from its name
 * (`GRPC_PORT` → `--grpc-port`). `parse` gets the raw text (undefined when unset) and the
 * label to name in an error: the variable, or the flag when the value came from one.
 */
export interface Setting<T> {
  readonly env: string;
  /** One line for `latchkey serve --help`; `doc` may say more in docs/configuration.md. */
  readonly help: string;
  /** The default as help and docs show it; `(unset)` when there is none. */
  readonly shownDefault: string;
  /** A secret: its value is never echoed, and its flag shows up in `ps`, so help says so. */
  readonly secret?: boolean;
  /** The values it accepts, as the configuration reference shows them: `0 to 65535`. */
  readonly accepts?: string;
  /** What the configuration reference says of it, when more than `help`. */
  readonly doc?: string;
  parse(raw: string | undefined, label: string): T;
}

/** The text of a set variable, or undefined for an unset or empty one. */
function given(raw: string | undefined): string | undefined {
  return raw === undefined || raw === "" ? undefined : raw;
}

export function integer(
  env: string,
  fallback: number,
  min: number,
  max: number,
  help: string,
): Setting<number> {
  return {
    env,
    help,
    shownDefault: String(fallback),
    accepts: `${min} to ${max}`,
    parse(raw, label) {
      const text = given(raw);
      if (text === undefined) return fallback;
      const n = Number(text);
      if (!Number.isInteger(n) || n < min || n > max) {
        throw new ConfigError(`${label}=${text}: must be an integer from ${min} to ${max}`);
      }
      return n;
    },
  };
}

export function boolean(env: string, fallback: boolean, help: string): Setting<boolean> {
  return {
    env,
    help,
    shownDefault: String(fallback),
    accepts: "true, false (or 1, 0)",
    parse(raw, label) {
      const text = given(raw);
      if (text === undefined) return fallback;
      if (text === "true" || text === "1") return true;
      if (text === "false" || text === "0") return false;
      throw new ConfigError(`${label}=${text}: must be true or false`);
    },
  };
}

export function oneOf<const T extends string>(
  env: string,
  values: readonly T[],
  fallback: T,
  help: string,
): Setting<T> {
  return {
    env,
    help: `${help} (${values.join(", ")})`,
    shownDefault: fallback,
    accepts: values.join(", "),
    parse(raw, label) {
      const text = given(raw);
      if (text === undefined) return fallback;
      if ((values as readonly string[]).includes(text)) return text as T;
      throw new ConfigError(`${label}=${text}: must be one of ${values.join(", ")}`);
    },
  };
}

export function text(env: string, fallback: string, help: string): Setting<string> {
  return { env, help, shownDefault: fallback, parse: (raw) => given(raw) ?? fallback };
}

/** A text without default; `check` may refuse it (never echoing a secret one). */
export function optional(
  env: string,
  help: string,
  opts: {
    secret?: boolean;
    check?: (value: string, label: string) => string;
    /** The default as shown, when unset means something the caller derives. */
    shownDefault?: string;
    /** What it accepts, as the configuration reference shows it. */
    accepts?: string;
  } = {},
): Setting<string | undefined> {
  return {
    env,
    help,
    shownDefault: opts.shownDefault ?? "(unset)",
    accepts: opts.accepts,
    secret: opts.secret,
    parse(raw, label) {
      const value = given(raw);
      return value === undefined || !opts.check ? value : opts.check(value, label);
    },
  };
}

/** The setting with a longer text for the configuration reference than its one line of help. */
export function documented<T>(setting: Setting<T>, doc: string): Setting<T> {
  return { ...setting, doc };
}

/**
 * A check of a comma-separated list of at most `max` values, each passing `item`: a list of
 * former secrets, say. The error names the label and never a value.
 */
export function commaListCheck(
  item: (value: string, label: string) => string,
  max: number,
  noun: string,
): (list: string, label: string) => string {
  return (list, label) => {
    const values = list.split(",");
    for (const v of values) item(v, label);
    if (values.length > max)
      throw new ConfigError(`${label}: at most ${max} comma-separated ${noun}`);
    return list;
  };
}
