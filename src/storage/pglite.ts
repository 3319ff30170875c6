import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db, Queryable, QueryOptions } from "./db.js";
import { PgliteThread } from "./pglite-thread.js";

/** Options of the embedded PGlite adapter. */
export interface PgliteOptions {
  /**
   * Directory of the database files; undefined: a new temporary directory, removed by
   * `close()` (the database lives as long as this Db, like one in memory).
   */
  dataDir?: string;
  /** A dump made by `dump()` to start from (tests load a migrated database this way). */
  loadDataDir?: Blob | File;
}

/** A PGlite database; `dump` snapshots it for `openPglite({ loadDataDir })`. */
export interface PgliteDb extends Db {
  dump(): Promise<Blob>;
  /** How many times the database thread was ended (a query past its timeout) or lost. */
  restarts(): number;
}

/** Free space a temporary database's directory wants: a migrated database is ~40 MB. */
const TEMPORARY_SPACE = 1024 * 1024 * 1024;

/**
 * Where a database without a directory goes: memory-backed /dev/shm when it has room (it
 * stands in for an in-memory database and loads about as fast), else the temp folder.
 */
export function temporaryParent(): string {
  try {
    const fs = statfsSync("/dev/shm");
    if (fs.bavail * fs.bsize >= TEMPORARY_SPACE) return "/dev/shm";
  } catch {
    // No /dev/shm here (not Linux): the temp folder.
  }
  return tmpdir();
}

type Subscriber = { onMessage: (payload: string) => void; onConnect?: () => void };

/** Statements on the thread, inside transaction `tx` when given. */
function runnerOf(thread: PgliteThread, tx?: number): Queryable {
  const inTx = tx !== undefined ? { tx } : {};
  return {
    query<T>(text: string, params: readonly unknown[] = [], opts: QueryOptions = {}) {
      const timeout = opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {};
      return thread.submit<T[]>({ request: { op: "query", text, params }, ...inTx, ...timeout });
    },
    async exec(script: string) {
      await thread.submit({ request: { op: "exec", script }, ...inTx });
    },
    async copyCsv(target: string, data: string | Uint8Array) {
      await thread.submit({ request: { op: "copy", target, data }, ...inTx });
    },
  };
}

/** `Db.transaction` over the thread: begin, `fn`'s statements, then commit or rollback. */
function transactionOf(thread: PgliteThread): Db["transaction"] {
  let nextTx = 1;
  return async (fn) => {
    const tx = nextTx++;
    await thread.submit({ request: { op: "exec", script: "begin" }, opens: tx });
    let result: Awaited<ReturnType<typeof fn>>;
    try {
      result = await fn(runnerOf(thread, tx));
    } catch (err) {
      const rollback = { op: "exec", script: "rollback" } as const;
      await thread.submit({ request: rollback, tx, closes: true, rollback: true }).catch(() => {});
      throw err;
    }
    await thread.submit({ request: { op: "exec", script: "commit" }, tx, closes: true });
    return result;
  };
}

/** `Db.listen` over the thread; subscriptions are taken again on each new thread. */
function listenOf(thread: PgliteThread): Db["listen"] {
  const channels = new Map<string, Set<Subscriber>>();
  thread.onNotify = (channel, payload) => {
    for (const s of channels.get(channel) ?? []) s.onMessage(payload);
  };
  // A new thread has no subscriptions: take them again, then tell each subscriber, which
  // may have missed notifications meanwhile.
  thread.onRestart = () => {
    for (const [channel, subs] of channels)
      thread.submit({ request: { op: "listen", channel }, first: true }).then(
        () => {
          for (const s of subs) s.onConnect?.();
        },
        () => {},
      );
  };
  return async (channel, onMessage, onConnect) => {
    const sub: Subscriber = { onMessage, ...(onConnect ? { onConnect } : {}) };
    let subs = channels.get(channel);
    if (!subs) {
      subs = new Set();
      channels.set(channel, subs);
      await thread.submit({ request: { op: "listen", channel } });
    }
    subs.add(sub);
    onConnect?.();
    return async () => {
      subs.delete(sub);
      if (subs.size > 0 || channels.get(channel) !== subs) return;
      channels.delete(channel);
      await thread.submit({ request: { op: "unlisten", channel } });
    };
  };
}

/**
 * The Db port over embedded PGlite: PostgreSQL compiled to WebAssembly, one connection, run
 * on its own worker thread so that the server's thread never waits for it. Work runs one
 * job at a time, in order; a transaction holds the connection until it ends. A query given
 * `timeoutMs` that runs longer is cancelled with SQLSTATE 57014 by ending the thread and
 * starting another on the same files (PostgreSQL recovers them from its log; the query's
 * transaction leaves nothing). If the thread dies, the work in flight fails with
 * DbUnavailableError and the next starts a new thread. NOTIFY reaches LISTENers of this
 * process only.
 */
export async function openPglite(options: PgliteOptions): Promise<PgliteDb> {
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(temporaryParent(), "latchkey-pglite-"));
  const load = options.loadDataDir
    ? new Uint8Array(await options.loadDataDir.arrayBuffer())
    : undefined;
  const thread = new PgliteThread(dataDir, load);
  const removeTemporary = () => {
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await thread.open();
  } catch (err) {
    removeTemporary();
    throw err;
  }

  return {
    engine: "pglite",
    ...runnerOf(thread),
    transaction: transactionOf(thread),
    listen: listenOf(thread),
    async close() {
      try {
        await thread.close();
      } finally {
        removeTemporary();
      }
    },
    async dump() {
      const bytes = await thread.submit<Uint8Array>({ request: { op: "dump" } });
      return new Blob([bytes as Uint8Array<ArrayBuffer>]);
    },
    restarts: () => thread.restarts,
  };
}
