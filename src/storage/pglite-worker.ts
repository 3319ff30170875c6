/**
 * The thread that runs PGlite (PostgreSQL compiled to WebAssembly) for pglite-thread.ts, so
 * that the server's own thread never runs the database: a long query, COPY or write keeps
 * this thread busy, not the one that answers requests. It runs the requests it is sent one
 * at a time, in order; the server's thread sends one at a time and may end this thread in
 * the middle of one (a query past its timeout). Run by Node directly (types stripped), so
 * it imports only packages and types.
 */

import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import type { WorkerError, WorkerMessage, WorkerRequest, WorkerStart } from "./pglite-protocol.js";

const port = parentPort;
if (!port) throw new Error("pglite-worker.ts runs as a worker thread");

const FIELDS = ["code", "severity", "detail", "hint", "position", "where", "schema", "table"];
const FIELDS_MORE = ["column", "dataType", "constraint", "routine"];

function plain(err: unknown): WorkerError {
  const fields: Record<string, string> = {};
  for (const f of [...FIELDS, ...FIELDS_MORE]) {
    const v = (err as Record<string, unknown> | null)?.[f];
    if (typeof v === "string") fields[f] = v;
  }
  return { message: err instanceof Error ? err.message : String(err), fields };
}

function post(message: WorkerMessage, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

const start = workerData as WorkerStart;

/**
 * PostgreSQL settings for an embedded, single-connection database, on top of PGlite's own.
 * PGlite's data directory says shared_buffers = 128MB, and PostgreSQL touches all of its
 * shared memory when it starts, so the pool alone kept ~150 MB resident from the first
 * second. Every page PGlite reads comes through the operating system's file cache anyway, so
 * a page missing from a small pool costs a system call and a copy while that cache holds it;
 * 16MB (2,048 pages) keeps the upper levels of the indexes and the pages the event COPYs
 * append to. The write-ahead log's buffers follow (1/32 of the pool). Given on the command
 * line, these override the data directory's postgresql.conf and are never written into it.
 */
const SETTINGS = ["shared_buffers=16MB"];
const unlisten = new Map<string, () => Promise<void>>();

async function run(pg: PGlite, req: WorkerRequest): Promise<unknown> {
  switch (req.op) {
    case "query":
      return (await pg.query(req.text, req.params as unknown[])).rows;
    case "exec":
      await pg.exec(req.script);
      return undefined;
    case "copy":
      // PGlite reads COPY ... FROM '/dev/blob' from the statement's blob, in one
      // simple-protocol message.
      await pg.exec(`copy ${req.target} from '/dev/blob' with (format csv)`, {
        blob: new Blob([req.data as string | Uint8Array<ArrayBuffer>]),
      });
      return undefined;
    case "dump":
      return new Uint8Array(await (await pg.dumpDataDir("none")).arrayBuffer());
    case "listen":
      if (!unlisten.has(req.channel))
        unlisten.set(
          req.channel,
          await pg.listen(req.channel, (payload) =>
            post({ type: "notify", channel: req.channel, payload }),
          ),
        );
      return undefined;
    case "unlisten":
      await unlisten.get(req.channel)?.();
      unlisten.delete(req.channel);
      return undefined;
    case "close":
      await pg.close();
      return undefined;
  }
}

async function main(): Promise<void> {
  let pg: PGlite;
  try {
    pg = await PGlite.create({
      dataDir: start.dataDir,
      startParams: [...PGlite.defaultStartParams, ...SETTINGS.flatMap((s) => ["-c", s])],
      ...(start.loadDataDir ? { loadDataDir: new Blob([start.loadDataDir]) } : {}),
    });
  } catch (err) {
    post({ type: "failed", error: plain(err) });
    return;
  }
  if (start.initOnly) {
    await pg.close();
    post({ type: "ready" });
    return;
  }
  // One request at a time: the next waits for the previous, like one connection.
  let chain = Promise.resolve();
  port?.on("message", (req: WorkerRequest) => {
    chain = chain.then(async () => {
      try {
        const value = await run(pg, req);
        const transfer = value instanceof Uint8Array ? [value.buffer as ArrayBuffer] : [];
        post({ type: "result", id: req.id, value }, transfer);
        if (req.op === "close") port?.close();
      } catch (err) {
        post({ type: "error", id: req.id, error: plain(err) });
      }
    });
  });
  post({ type: "ready" });
}

void main();
