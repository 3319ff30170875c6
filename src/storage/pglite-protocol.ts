/**
 * Messages between the server's thread and the thread that runs PGlite (pglite-worker.ts).
 * Types only: the worker imports nothing of Latchkey at run time.
 */

/** What the worker is started with. */
export interface WorkerStart {
  /** Directory of the database files (always set: an in-memory database uses a temp one). */
  dataDir: string;
  /** A dump to load into the empty directory, on the first start only. */
  loadDataDir?: Uint8Array;
  /** Only create the database in the empty directory and close it (then posts `ready`). */
  initOnly?: boolean;
}

/** One request; the worker runs one at a time, in the order they arrive. */
export type WorkerRequest = { id: number } & (
  | { op: "query"; text: string; params: readonly unknown[] }
  | { op: "exec"; script: string }
  | { op: "copy"; target: string; data: string | Uint8Array }
  | { op: "dump" }
  | { op: "listen"; channel: string }
  | { op: "unlisten"; channel: string }
  | { op: "close" }
);

/** A database error as plain data: its message and PostgreSQL's fields (SQLSTATE `code`...). */
export interface WorkerError {
  message: string;
  fields: Record<string, string>;
}

/** What the worker posts back. */
export type WorkerMessage =
  | { type: "ready" }
  | { type: "failed"; error: WorkerError }
  | { type: "result"; id: number; value: unknown }
  | { type: "error"; id: number; error: WorkerError }
  | { type: "notify"; channel: string; payload: string };
