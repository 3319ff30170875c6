import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Db } from "./db.js";
import { openPglite } from "./pglite.js";
import { openPostgres } from "./postgres.js";

/** Where the database lives: a PostgreSQL URL, else an embedded PGlite directory. */
export interface DatabaseTarget {
  databaseUrl: string | undefined;
  dataDir: string;
  /** Connections of the PostgreSQL pool (default 10). */
  databasePoolSize?: number;
  /** Longest one PostgreSQL statement may run (0 or undefined: no bound). */
  statementTimeoutMs?: number;
}

/** A directory held by another live process. */
export class DataDirInUseError extends Error {
  override name = "DataDirInUseError";
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes `<dir>/latchkey.lock`. PGlite is one process's database: a second process on
 * the same files would corrupt them, so it is refused with a clear message.
 */
function lockDataDir(dir: string): () => void {
  const file = join(dir, "latchkey.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const pid = Number(readFileSync(file, "utf8"));
      if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) {
        throw new DataDirInUseError(
          `DATA_DIR ${resolve(dir)} is in use by process ${pid}; stop it first, or set DATABASE_URL to share a PostgreSQL database`,
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirInUseError(`could not lock DATA_DIR ${resolve(dir)}`);
}

/** Opens PostgreSQL when `databaseUrl` is set, else PGlite in `dataDir` (created if needed). */
export async function openDatabase(target: DatabaseTarget): Promise<Db> {
  if (target.databaseUrl) {
    return openPostgres({
      url: target.databaseUrl,
      max: target.databasePoolSize ?? 10,
      statementTimeoutMs: target.statementTimeoutMs ?? 0,
    });
  }
  mkdirSync(target.dataDir, { recursive: true });
  const unlock = lockDataDir(target.dataDir);
  try {
    const db = await openPglite({ dataDir: target.dataDir });
    return {
      ...db,
      async close() {
        try {
          await db.close();
        } finally {
          unlock();
        }
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}
