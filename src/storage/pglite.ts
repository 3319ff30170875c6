import { Worker } from "node:worker_threads";
import { type Db, DbUnavailableError, type Queryable } from "./db.js";
import type { Reply, Request, SerializedError, ThreadOptions } from "./pglite-thread.js";

/** Options of the embedded PGlite adapter. */
export interface PgliteOptions {
  /** Directory of the database files; undefined keeps the database in memory. */
  dataDir?: string;
  /** A dump made by `dump()` to start from (tests load a migrated database this way). */
  loadDataDir?: Blob | File;
}

/** A PGlite database; `dump` snapshots it for `openPglite({ loadDataDir })`. */
export interface PgliteDb extends Db {
  dump(): Promise<Blob>;
}

// Compiled, the thread is a .js file beside this one; under the test runner, the .ts source.
const THREAD = new URL(
  import.meta.url.endsWith(".ts") ? "./pglite-thread.ts" : "./pglite-thread.js",
  import.meta.url,
);

type Ask = Request extends infer R ? (R extends Request ? Omit<R, "id"> : never) : never;

/**
 * The Db port over embedded PGlite: PostgreSQL compiled to WebAssembly, one connection, run in
 * a worker thread (pglite-thread.ts) so that its work (a batch of events, an analytics query, a
 * cache miss) never stalls the requests on this thread. Queries queue behind each other; a
 * transaction holds the connection. NOTIFY reaches LISTENers of this same process only.
 */
export async function openPglite(options: PgliteOptions): Promise<PgliteDb> {
  const workerData: ThreadOptions = {
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir !== undefined ? { load: await options.loadDataDir.arrayBuffer() } : {}),
  };
  const worker = new Worker(THREAD, { workerData });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  const channels = new Map<string, (payload: string) => void>();
  let nextId = 1;
  let gone: unknown;

  const failAll = (err: unknown) => {
    gone ??= err;
    for (const p of pending.values()) p.reject(new DbUnavailableError(err));
    pending.clear();
  };
  await new Promise<void>((resolve, reject) => {
    worker.on("message", (m: Reply | { id: 0; ready?: true; failed?: SerializedError }) => {
      if (m.id !== 0) {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (pending.size === 0) worker.unref();
        if (!p) return;
        if ("ok" in m && m.ok) p.resolve(m.value);
        else if ("error" in m) p.reject(revive(m.error));
      } else if ("notify" in m) channels.get(m.notify)?.(m.payload);
      else if ("ready" in m) resolve();
      else if ("failed" in m && m.failed) reject(revive(m.failed));
    });
    worker.once("error", (err) => {
      reject(err);
      failAll(err);
    });
    worker.once("exit", (code) => {
      const err = new Error(`the PGlite thread exited (code ${code})`);
      reject(err);
      failAll(err);
    });
  });

  worker.unref();
  const ask = <T>(m: Ask): Promise<T> => {
    if (gone !== undefined) return Promise.reject(new DbUnavailableError(gone));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      // The thread keeps the process alive only while a request waits on it: a database left
      // open (by a test, by a command that returned) never holds the process at its exit.
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...m, id });
    });
  };
  const runner = (tx?: number): Queryable => ({
    query: <T>(text: string, params: readonly unknown[] = []) =>
      ask<T[]>({ op: "query", text, params: [...params], ...(tx ? { tx } : {}) }),
    exec: (script: string) => ask<void>({ op: "exec", script, ...(tx ? { tx } : {}) }),
  });
  const root = runner();
  return {
    engine: "pglite",
    query: root.query,
    exec: root.exec,
    async transaction(fn) {
      const tx = await ask<number>({ op: "begin" });
      let value: Awaited<ReturnType<typeof fn>>;
      try {
        value = await fn(runner(tx));
      } catch (err) {
        await ask({ op: "end", tx, commit: false }).catch(() => {});
        throw err;
      }
      await ask({ op: "end", tx, commit: true });
      return value;
    },
    async listen(channel, onMessage, onConnect) {
      channels.set(channel, onMessage);
      await ask({ op: "listen", channel });
      onConnect?.();
      return async () => {
        channels.delete(channel);
        await ask({ op: "unlisten", channel });
      };
    },
    async close() {
      if (gone === undefined) await ask({ op: "close" }).catch(() => {});
      gone ??= new Error("the database is closed");
      await worker.terminate();
    },
    dump: async () => new Blob([await ask<ArrayBuffer>({ op: "dump" })]),
  };
}

/** An error from the thread, with the fields our callers read (`code` is the SQLSTATE). */
function revive(e: SerializedError): Error {
  const err = new Error(e.message);
  err.name = e.name;
  return Object.assign(err, e.fields);
}
