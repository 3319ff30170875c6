import type { AdminDeps } from "../admin/commands.js";
import { InvalidationBus } from "../cache/bus.js";
import type { SettingName } from "../config/settings.js";
import { type Config, loadConfig } from "../config.js";
import { systemClock } from "../domain/clock.js";
import { newId } from "../domain/ids.js";
import { createLogger } from "../log.js";
import { openDatabaseWhenUp } from "../startup/database.js";
import { migrate } from "../storage/migrate.js";
import type { Command, OptionSpec, Parsed } from "./command.js";
import { type Io, writeLine } from "./io.js";
import { settingFlags, settingOption } from "./setting-flags.js";

/**
 * The admin operations, loaded when a command runs them: they bring in every procedure's
 * options (for the permission check), which help, --version and refusals do not need.
 */
export function admin(): Promise<typeof import("../admin/commands.js")> {
  return import("../admin/commands.js");
}

/** The settings every command that opens the database takes as flags, as `serve` does. */
const DATABASE_SETTINGS: SettingName[] = ["databaseUrl", "dataDir", "startupWaitS"];

export const databaseOptions: Record<string, OptionSpec> = Object.fromEntries(
  DATABASE_SETTINGS.map(settingOption),
);

/** What an admin command works with: the database, migrated, and how it hashes new keys. */
export interface AdminContext {
  deps: AdminDeps;
  config: Config;
  /** The migrations this command applied (a database is migrated before any command). */
  applied: number[];
}

/**
 * Runs `fn` with the database of the environment and the flags, migrated, and closes it.
 * Waiting for PostgreSQL is logged on stderr: stdout holds the command's answer.
 */
export async function withDatabase<T>(
  parsed: Parsed,
  io: Io,
  fn: (ctx: AdminContext) => Promise<T>,
): Promise<T> {
  const config = loadConfig(io.env, settingFlags(parsed.values, DATABASE_SETTINGS));
  const log = createLogger(config.logLevel, io.stderr);
  const db = await openDatabaseWhenUp(config, log);
  try {
    const applied = await migrate(db, systemClock.now());
    // Root keys made here are hashed like the server's: under KEY_HASH_PEPPER when set.
    const deps = {
      db,
      clock: systemClock,
      bus: new InvalidationBus(newId("node")),
      keyHashing: config.keyHashing,
    };
    return await fn({ deps, config, applied });
  } finally {
    await db.close();
  }
}

export const migrateCommand: Command = {
  name: "migrate",
  usage: "[options]",
  summary: "Applies pending database migrations and exits (serve does it at every start).",
  options: databaseOptions,
  run: (parsed, io) =>
    withDatabase(parsed, io, async ({ applied }) => {
      writeLine(
        io.stdout,
        applied.length ? `applied migrations ${applied.join(", ")}` : "database is up to date",
      );
    }),
};
