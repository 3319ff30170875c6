import { PGlite } from "@electric-sql/pglite";
import type { Db, Queryable } from "./db.js";

/** Options of the embedded PGlite adapter. */
export interface PgliteOptions {
  /** Directory of the database files; undefined keeps the database in memory. */
  dataDir?: string;
  /** A dump made by `dumpDataDir()` to start from (tests load a migrated database this way). */
  loadDataDir?: Blob | File;
}

/**
 * The Db port over embedded PGlite: PostgreSQL compiled to WebAssembly, one connection
 * in this process. Queries queue behind each other; a transaction holds the connection.
 * NOTIFY is delivered to LISTENers of this same process only.
 */
/** A PGlite database; `dump` snapshots it for `openPglite({ loadDataDir })`. */
export interface PgliteDb extends Db {
  dump(): Promise<Blob>;
}

export async function openPglite(options: PgliteOptions): Promise<PgliteDb> {
  const pg = await PGlite.create({
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir !== undefined ? { loadDataDir: options.loadDataDir } : {}),
  });
  const runner = (s: Pick<PGlite, "query" | "exec">): Queryable => ({
    async query<T>(text: string, params: readonly unknown[] = []): Promise<T[]> {
      const res = await s.query<T>(text, params as unknown[]);
      return res.rows;
    },
    async exec(script: string): Promise<void> {
      await s.exec(script);
    },
    async copyCsv(target: string, csv: string | Uint8Array): Promise<void> {
      // PGlite reads COPY ... FROM '/dev/blob' from the statement's blob. `exec` sends it as
      // one simple-protocol message instead of the five of an extended query (parse, bind,
      // describe, execute, sync), each a call into PostgreSQL on the server's thread.
      await s.exec(`copy ${target} from '/dev/blob' with (format csv)`, {
        blob: new Blob([csv as string | Uint8Array<ArrayBuffer>]),
      });
    },
  });
  const root = runner(pg);
  return {
    engine: "pglite",
    query: root.query,
    exec: root.exec,
    copyCsv: root.copyCsv,
    transaction: (fn) => pg.transaction((tx) => fn(runner(tx))),
    async listen(channel, onMessage, onConnect) {
      const unsubscribe = await pg.listen(channel, onMessage);
      onConnect?.();
      return unsubscribe;
    },
    close: () => pg.close(),
    dump: () => pg.dumpDataDir("none"),
  };
}
