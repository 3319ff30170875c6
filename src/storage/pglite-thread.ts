// The worker thread that owns an embedded PGlite database (see pglite.ts, its only user).
// PGlite is PostgreSQL compiled to WebAssembly and runs synchronously on the thread that calls
// it: on the server's thread, a batch of events or a cache miss would stall every request in
// flight. Here it runs beside the server's thread and answers messages.
//
// This file imports nothing of ours, so Node can load it as is, compiled or stripped of types.
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, type Transaction } from "@electric-sql/pglite";

/** What the server's thread asks; `tx` routes a query into an open transaction. */
export type Request =
  | { id: number; op: "query"; text: string; params: unknown[]; tx?: number }
  | { id: number; op: "exec"; script: string; tx?: number }
  | { id: number; op: "begin" }
  | { id: number; op: "end"; tx: number; commit: boolean }
  | { id: number; op: "listen"; channel: string }
  | { id: number; op: "unlisten"; channel: string }
  | { id: number; op: "dump" }
  | { id: number; op: "close" };

/** An answer to request `id`, or a notification (`id` 0). */
export type Reply =
  | { id: number; ok: true; value?: unknown }
  | { id: number; ok: false; error: SerializedError }
  | { id: 0; notify: string; payload: string };

/** A thrown error as data: its message, name and own fields (SQLSTATE `code`, `detail`...). */
export type SerializedError = { message: string; name: string; fields: Record<string, unknown> };

export interface ThreadOptions {
  dataDir?: string;
  /** The bytes of a dump made by `dump` to start from. */
  load?: ArrayBuffer;
}

if (!parentPort) throw new Error("pglite-thread runs as a worker thread");
const port = parentPort;
const options = workerData as ThreadOptions;

function serialize(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { message: String(err), name: "Error", fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    if (v === null || ["string", "number", "boolean"].includes(typeof v)) fields[k] = v;
  }
  return { message: err.message, name: err.name, fields };
}

const reply = (r: Reply) => port.postMessage(r);

/** Thrown inside PGlite's transaction callback to roll it back on request. */
const ROLLBACK = Symbol("rollback");

async function main(): Promise<void> {
  const pg = await PGlite.create({
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.load !== undefined ? { loadDataDir: new Blob([options.load]) } : {}),
  });
  const txs = new Map<number, { tx: Transaction; end: (commit: boolean) => void }>();
  const listeners = new Map<string, () => Promise<void>>();
  let nextTx = 1;

  const target = (tx: number | undefined) => {
    if (tx === undefined) return pg;
    const open = txs.get(tx);
    if (!open) throw new Error(`transaction ${tx} is not open`);
    return open.tx;
  };

  /** Transactions settle here: COMMIT done (or failed), or ROLLBACK done. */
  const settled = new Map<number, Promise<void>>();

  /** Opens a transaction that stays open until an `end` message; resolves with its number. */
  function begin(): Promise<number> {
    const n = nextTx++;
    return new Promise((resolveBegin, rejectBegin) => {
      let started = false;
      const done = pg
        .transaction(async (tx) => {
          started = true;
          const commit = await new Promise<boolean>((end) => {
            txs.set(n, { tx, end });
            resolveBegin(n);
          });
          if (!commit) throw ROLLBACK;
        })
        .then(
          () => undefined,
          (err) => {
            if (err !== ROLLBACK) throw err;
          },
        );
      settled.set(n, done);
      done.catch((err) => {
        if (!started) {
          settled.delete(n);
          rejectBegin(err);
        }
      });
    });
  }

  async function run(m: Request): Promise<unknown> {
    switch (m.op) {
      case "query":
        return (await target(m.tx).query(m.text, m.params)).rows;
      case "exec":
        await target(m.tx).exec(m.script);
        return undefined;
      case "begin":
        return await begin();
      case "end": {
        const open = txs.get(m.tx);
        if (!open) throw new Error(`transaction ${m.tx} is not open`);
        txs.delete(m.tx);
        open.end(m.commit);
        try {
          await settled.get(m.tx);
        } finally {
          settled.delete(m.tx);
        }
        return undefined;
      }
      case "listen": {
        if (!listeners.has(m.channel)) {
          const stop = await pg.listen(m.channel, (payload) =>
            reply({ id: 0, notify: m.channel, payload }),
          );
          listeners.set(m.channel, stop);
        }
        return undefined;
      }
      case "unlisten": {
        await listeners.get(m.channel)?.();
        listeners.delete(m.channel);
        return undefined;
      }
      case "dump":
        return await (await pg.dumpDataDir("none")).arrayBuffer();
      case "close":
        await pg.close();
        return undefined;
    }
  }

  port.on("message", (m: Request) => {
    run(m).then(
      (value) => {
        reply({ id: m.id, ok: true, value });
        if (m.op === "close") port.close();
      },
      (err) => reply({ id: m.id, ok: false, error: serialize(err) }),
    );
  });
  port.postMessage({ id: 0, ready: true });
}

main().catch((err) => {
  port.postMessage({ id: 0, failed: serialize(err) });
});
