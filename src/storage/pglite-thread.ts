import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { DbUnavailableError } from "./db.js";
import type { WorkerError, WorkerMessage, WorkerRequest, WorkerStart } from "./pglite-protocol.js";

/** A request without its id (the thread numbers them). */
export type Request = WorkerRequest extends infer R
  ? R extends WorkerRequest
    ? Omit<R, "id">
    : never
  : never;

/** One unit of work waiting for, or running on, the database thread. */
export interface Job {
  request: Request;
  /** The transaction this job belongs to; undefined: none. */
  tx?: number;
  /** This job begins transaction `opens` (it runs only when no transaction is open). */
  opens?: number;
  /** This job ends the open transaction (commit or rollback), whatever its outcome. */
  closes?: boolean;
  /** A rollback: a transaction already gone has nothing to roll back, so it succeeds. */
  rollback?: boolean;
  /** Longest the job may run once sent; past it the thread is ended and the job fails 57014. */
  timeoutMs?: number;
  /** Runs before the jobs already waiting (re-subscriptions after a restart). */
  first?: boolean;
}

interface Pending extends Job {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** A database error rebuilt on this side, with PostgreSQL's fields (`code`...) as properties. */
function rebuild(error: WorkerError): Error {
  return Object.assign(new Error(error.message), error.fields);
}

/** The error of a statement stopped at its timeout: SQLSTATE 57014, as PostgreSQL says it. */
export function cancelledError(timeoutMs: number): Error {
  return Object.assign(
    new Error(`canceling statement due to statement timeout (${timeoutMs} ms)`),
    { code: "57014" },
  );
}

/** Where the worker's code is: beside this module, .ts under the tests, .js once built. */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./pglite-worker.ts" : "./pglite-worker.js",
  import.meta.url,
);

/**
 * Runs PGlite on a worker thread and schedules its work from the server's thread: one job at
 * a time, in order, and while a transaction is open only that transaction's jobs. Because
 * this side knows which job is running and that the others have not started, it can end
 * the worker in the middle of a job (timeout, crash) and hand the waiting jobs to a new
 * worker on the same data directory, which PostgreSQL recovers from its log as after a
 * power cut: the stopped job and its open transaction leave no trace, committed work stays.
 */
export class PgliteThread {
  readonly #dataDir: string;
  #firstLoad: Uint8Array | undefined;
  #worker: Worker | undefined;
  #starting: Promise<void> | undefined;
  readonly #queue: Pending[] = [];
  #running: { job: Pending; id: number; timer: NodeJS.Timeout | undefined } | undefined;
  #openTx: number | undefined;
  /** Why each transaction that ended without its commit or rollback ended. */
  readonly #lostTx = new Map<number, Error>();
  #nextId = 1;
  #closed = false;
  #closing = false;
  /** Runs after each new worker is up, before waiting jobs go on (listeners re-subscribe). */
  onRestart: (() => void) | undefined;
  /** Receives NOTIFY payloads of channels listened to. */
  onNotify: ((channel: string, payload: string) => void) | undefined;
  /** How many times a worker was ended or lost and replaced (for tests and metrics). */
  restarts = 0;

  constructor(dataDir: string, loadDataDir?: Uint8Array) {
    this.#dataDir = dataDir;
    this.#firstLoad = loadDataDir;
  }

  /**
   * Starts the first worker; rejects when PGlite cannot open the directory. An empty
   * directory is first given its database by a worker of its own that then ends: PGlite
   * creates a database with a second PostgreSQL instance (initdb) whose WebAssembly memory
   * (~165 MB of it touched) would otherwise stay with the serving thread until its heap
   * happened to be collected.
   */
  async open(): Promise<void> {
    if (!this.#firstLoad && !existsSync(join(this.#dataDir, "PG_VERSION"))) {
      await this.#run({ dataDir: this.#dataDir, initOnly: true });
    }
    await this.#ensureWorker();
  }

  /** Queues a job; resolves to its result. */
  submit<T>(job: Job): Promise<T> {
    if (this.#closed) return Promise.reject(new DbUnavailableError(new Error("database closed")));
    return new Promise<T>((resolve, reject) => {
      const pending = { ...job, resolve: resolve as (v: unknown) => void, reject };
      // A job of a transaction that is gone settles now, not after a restart.
      if (this.#settleIfOrphan(pending)) return;
      if (job.first) this.#queue.unshift(pending);
      else this.#queue.push(pending);
      this.#pump();
    });
  }

  /** Runs the queued jobs, then closes the database and ends the worker. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closing = true;
    try {
      await this.submit({ request: { op: "close" } });
    } catch {
      // A worker that cannot close cleanly is ended below; its log holds the committed work.
    } finally {
      this.#closed = true;
      const worker = this.#worker;
      this.#worker = undefined;
      await worker?.terminate();
      for (const job of this.#queue.splice(0))
        job.reject(new DbUnavailableError(new Error("database closed")));
    }
  }

  #ensureWorker(): Promise<void> {
    if (this.#worker) return Promise.resolve();
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  /** A worker started with `data`, once it says it is ready (its database open). */
  async #run(data: WorkerStart): Promise<Worker> {
    const worker = new Worker(WORKER_URL, { workerData: data });
    await new Promise<void>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`database thread exited (${code})`));
      worker.once("error", reject);
      worker.once("exit", onExit);
      worker.once("message", (m: WorkerMessage) => {
        worker.off("error", reject);
        worker.off("exit", onExit);
        if (m.type === "ready") resolve();
        else reject(m.type === "failed" ? rebuild(m.error) : new Error("database thread failed"));
      });
    }).catch(async (err) => {
      await worker.terminate();
      throw new DbUnavailableError(err);
    });
    // One that only creates the database has closed it before saying so: it has no more to do.
    if (data.initOnly) await worker.terminate();
    return worker;
  }

  async #start(): Promise<void> {
    const data: WorkerStart = { dataDir: this.#dataDir };
    if (this.#firstLoad) data.loadDataDir = this.#firstLoad;
    const worker = await this.#run(data);
    this.#firstLoad = undefined;
    worker.on("message", (m: WorkerMessage) => this.#onMessage(worker, m));
    worker.on("error", (err) => this.#lose(worker, new DbUnavailableError(err)));
    worker.on("exit", (code) => {
      this.#lose(worker, new DbUnavailableError(new Error(`database thread exited (${code})`)));
    });
    worker.unref();
    this.#worker = worker;
  }

  /** Sends the next job that may run now, if the worker is idle. */
  #pump(): void {
    if (this.#running || this.#closed) return;
    if (!this.#worker) {
      if (this.#queue.length === 0) return;
      this.#ensureWorker().then(
        () => this.#pump(),
        (err) => {
          for (const job of this.#queue.splice(0)) job.reject(err);
        },
      );
      return;
    }
    const job = this.#next();
    if (!job) return;
    const id = this.#nextId++;
    const timer =
      job.timeoutMs !== undefined && job.timeoutMs > 0
        ? setTimeout(() => this.#cancel(), job.timeoutMs)
        : undefined;
    this.#running = { job, id, timer };
    this.#worker.ref();
    const request = job.request;
    if (request.op === "copy" && typeof request.data !== "string") {
      // A COPY's rows are a view into a buffer the caller shares (a 256 KiB chunk holds many
      // slices of rows), and cloning a view copies its whole buffer: each ~20 KB statement
      // copied 256 KiB on each side, about 8 MB a second of copying and of garbage for the
      // worker at 3,000 verifications a second. Its own bytes are copied once and handed over
      // (a new Uint8Array of a view copies; Buffer's slice would not).
      const own = new Uint8Array(request.data);
      this.#worker.postMessage({ ...request, data: own, id }, [own.buffer]);
    } else this.#worker.postMessage({ ...request, id });
  }

  /** The first job that may run now; settles at once the jobs of transactions that are gone. */
  #next(): Pending | undefined {
    for (let i = 0; i < this.#queue.length; i++) {
      const job = this.#queue[i] as Pending;
      if (this.#settleIfOrphan(job)) {
        this.#queue.splice(i--, 1);
        continue;
      }
      if (this.#openTx !== undefined && job.tx !== this.#openTx) continue;
      this.#queue.splice(i, 1);
      return job;
    }
    return undefined;
  }

  /**
   * Settles a job of a transaction that is no longer open (its thread was ended): a rollback
   * succeeds, anything else fails with the reason. True when it did.
   */
  #settleIfOrphan(job: Pending): boolean {
    if (job.tx === undefined || job.tx === this.#openTx) return false;
    if (job.rollback) job.resolve(undefined);
    else job.reject(this.#lostTx.get(job.tx) ?? new Error("the transaction has ended"));
    if (job.closes) this.#lostTx.delete(job.tx);
    return true;
  }

  #onMessage(worker: Worker, m: WorkerMessage): void {
    if (worker !== this.#worker) return;
    if (m.type === "notify") {
      this.onNotify?.(m.channel, m.payload);
      return;
    }
    const running = this.#running;
    if (!running || (m.type !== "result" && m.type !== "error") || m.id !== running.id) return;
    clearTimeout(running.timer);
    this.#running = undefined;
    worker.unref();
    const { job } = running;
    if (job.opens !== undefined && m.type === "result") this.#openTx = job.opens;
    if (job.closes) this.#openTx = undefined;
    if (m.type === "result") job.resolve(m.value);
    else job.reject(rebuild(m.error));
    this.#pump();
  }

  /** The running job passed its timeout: end the worker, fail the job with 57014, go on. */
  #cancel(): void {
    const running = this.#running;
    const worker = this.#worker;
    if (!running || !worker) return;
    const err = cancelledError(running.job.timeoutMs ?? 0);
    this.#replace(worker, err);
  }

  /** The worker died on its own (a crash, out of memory): its work fails with 503. */
  #lose(worker: Worker, err: Error): void {
    if (worker !== this.#worker || this.#closed) return;
    if (this.#closing) {
      // Closing: nothing to restart for; whatever was left fails.
      this.#worker = undefined;
      const running = this.#running;
      this.#running = undefined;
      if (running) clearTimeout(running.timer);
      for (const job of [...(running ? [running.job] : []), ...this.#queue.splice(0)])
        job.reject(err);
      return;
    }
    this.#replace(worker, err);
  }

  /**
   * Fails the running job and its transaction with `err`, ends `worker`, starts another on
   * the same directory and sends it the jobs that were waiting (none of them had started).
   */
  #replace(worker: Worker, err: Error): void {
    const running = this.#running;
    this.#running = undefined;
    if (running) clearTimeout(running.timer);
    this.#worker = undefined;
    if (this.#openTx !== undefined) {
      this.#lostTx.set(this.#openTx, err);
      this.#openTx = undefined;
    }
    this.restarts++;
    running?.job.reject(err);
    this.#starting = worker
      .terminate()
      .then(() => this.#start())
      .then(() => this.onRestart?.())
      .finally(() => {
        this.#starting = undefined;
      });
    this.#starting.then(
      () => this.#pump(),
      (startErr) => {
        for (const job of this.#queue.splice(0)) job.reject(startErr);
      },
    );
  }
}
