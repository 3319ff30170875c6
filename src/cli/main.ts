#!/usr/bin/env node
import {
  AdminError,
  createRootKey,
  createWorkspace,
  listRootKeys,
  revokeRootKey,
} from "../admin/commands.js";
import { type App, startApp } from "../app.js";
import { InvalidationBus } from "../cache/bus.js";
import { ConfigError, loadConfig } from "../config.js";
import { systemClock } from "../domain/clock.js";
import { newId } from "../domain/ids.js";
import { ALL_PERMISSIONS } from "../domain/root-permissions.js";
import { createLogger } from "../log.js";
import type { Db } from "../storage/db.js";
import { migrate } from "../storage/migrate.js";
import { DataDirInUseError, openDatabase } from "../storage/open.js";
import { parseArgs } from "./args.js";

const HELP = `latchkey: an API key management service

Usage:
  latchkey serve                        serve every door on PORT (default 8080)
  latchkey migrate                      apply pending database migrations and exit
  latchkey workspace create [--name N]  create a workspace; prints its id
  latchkey root-key create --workspace W (--permission P ... | --all) [--name N]
                                        create a root key; prints the secret once
  latchkey root-key list [--workspace W]
  latchkey root-key revoke ID

Configuration is read from the environment (see docs/deploying.md): DATABASE_URL, or DATA_DIR
for the embedded database, and the rest.`;

async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    await migrate(db, systemClock.now());
    return await fn(db);
  } finally {
    await db.close();
  }
}

function adminDeps(db: Db) {
  // Root keys made here are hashed like the server's: under KEY_HASH_PEPPER when set.
  const { keyHashing } = loadConfig();
  return { db, clock: systemClock, bus: new InvalidationBus(newId("node")), keyHashing };
}

async function serve(): Promise<void> {
  // The handlers go in before the app starts: it says "listening" from inside startApp, and a
  // SIGTERM sent on that line must still stop it gracefully (flushing its events), not kill it.
  let app: App | undefined;
  let stopping: string | undefined;
  let signals = 0;
  const stop = (signal: string) => {
    stopping = signal;
    if (!app) return; // stopped as soon as it has started
    const running = app;
    running.deps.log.info({ signal }, "shutting down");
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        running.deps.log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: string) => {
    signals++;
    if (signals > 1) process.exit(1);
    stop(signal);
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  app = await startApp({ config: loadConfig() });
  if (stopping) stop(stopping);
}

async function run(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const [command, sub] = args.positional;
  switch (`${command ?? ""} ${sub ?? ""}`.trim()) {
    case "serve":
      return serve();
    case "migrate":
      return withDb(async (db) => {
        const done = await migrate(db, systemClock.now());
        console.log(
          done.length ? `applied migrations ${done.join(", ")}` : "database is up to date",
        );
      });
    case "workspace create":
      return withDb(async (db) => {
        console.log(await createWorkspace(adminDeps(db), args.one("name") ?? "workspace"));
      });
    case "root-key create":
      return withDb(async (db) => {
        const workspace = args.one("workspace");
        if (!workspace) throw new AdminError("--workspace is required");
        const all = args.flag("all");
        const permissions = args.many("permission");
        if (all && permissions.length > 0)
          throw new AdminError("give --permission or --all, not both");
        const key = await createRootKey(
          adminDeps(db),
          workspace,
          all ? [ALL_PERMISSIONS] : permissions,
          args.one("name") ?? null,
        );
        console.error(`created root key ${key.id}; the secret below is shown only once`);
        console.log(key.secret);
      });
    case "root-key list":
      return withDb(async (db) => {
        for (const k of await listRootKeys(adminDeps(db), args.one("workspace"))) {
          const state = k.revokedAt !== null ? "revoked" : "live";
          console.log(
            [k.id, k.workspaceId, k.start, state, k.permissions.join(","), k.name ?? ""].join("\t"),
          );
        }
      });
    case "root-key revoke":
      return withDb(async (db) => {
        const id = args.positional[2];
        if (!id) throw new AdminError("usage: latchkey root-key revoke ID");
        await revokeRootKey(adminDeps(db), id);
        console.log(`revoked ${id}`);
      });
    case "":
    case "help":
      console.log(HELP);
      return;
    default:
      throw new AdminError(`unknown command '${args.positional.join(" ")}'\n\n${HELP}`);
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof AdminError || err instanceof ConfigError || err instanceof DataDirInUseError) {
    console.error(`latchkey: ${err.message}`);
    process.exit(2);
  }
  createLogger("error").error({ err }, "latchkey failed");
  process.exit(1);
});
