import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Logger } from "../log.js";
import { StartupError } from "./wait.js";

/**
 * Where the secret of the root key a first start creates goes. Never into the log: stdout
 * is where the log goes too, and a log is kept, shipped and read by others. So it is printed
 * only when stdout is a terminal (a person is watching, nothing keeps it), and otherwise
 * written to a file only its owner can read, whose path is logged.
 */
export type RootKeyDestination = { to: "terminal" } | { to: "file"; path: string };

export function rootKeyDestination(stdoutIsTerminal: boolean, file: string): RootKeyDestination {
  return stdoutIsTerminal ? { to: "terminal" } : { to: "file", path: resolve(file) };
}

/**
 * Writes the secret to `path` with mode 0600, replacing an older file whole: it is written
 * under another name and renamed, so no reader ever sees a partial or group-readable file.
 */
async function writeSecretFile(path: string, secret: string): Promise<void> {
  const partial = `${path}.${process.pid}.partial`;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(partial, `${secret}\n`, { mode: 0o600, flag: "wx" });
    await rename(partial, path);
  } catch (err) {
    await rm(partial, { force: true }).catch(() => {});
    throw new StartupError(
      `cannot write the first root key to ${path} (BOOTSTRAP_ROOT_KEY_FILE): ${(err as Error).message}`,
    );
  }
}

/**
 * How a new secret is handed over: `beforeCommit` inside the bootstrap's transaction, so a
 * file that cannot be written stores nothing (no root key that nobody can know); the terminal
 * is written `afterCommit`, so a printed key is always a stored one.
 */
export interface RootKeyKeeper {
  beforeCommit?: (secret: string) => Promise<void>;
  afterCommit?: (secret: string) => void;
}

export function rootKeyKeeper(destination: RootKeyDestination, log: Logger): RootKeyKeeper {
  if (destination.to === "terminal") {
    return {
      afterCommit: (secret) =>
        process.stdout.write(
          `\nLatchkey created a root key with *.*.* in the default workspace. It is shown only this once:\n\n  ${secret}\n\nKeep it secret; send it as 'Authorization: Bearer <key>'.\n\n`,
        ),
    };
  }
  return {
    async beforeCommit(secret) {
      await writeSecretFile(destination.path, secret);
      log.warn(
        { file: destination.path },
        "created the first root key (*.*.* in the default workspace); its secret is in this file (mode 0600) and nowhere else: keep it somewhere safe, then delete the file",
      );
    },
  };
}
