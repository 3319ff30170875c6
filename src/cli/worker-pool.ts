import cluster, { type Worker } from "node:cluster";
import type { Logger } from "../log.js";
import {
  type FailedMessage,
  type ListeningMessage,
  ours,
  type StopMessage,
  WORKER_SLOT_ENV,
  type WorkerMessage,
  WorkersError,
} from "./worker-protocol.js";
import { MAX_START_FAILURES, restartDelayMs, STABLE_AFTER_MS } from "./worker-restarts.js";

/** One worker's place: its number, its current process, and its history of crashes. */
interface Slot {
  readonly n: number;
  worker: Worker | undefined;
  listening: boolean;
  startedAt: number;
  crashes: number;
  failure: FailedMessage | undefined;
  restart: NodeJS.Timeout | undefined;
}

/** What the pool tells its owner. */
export interface PoolEvents {
  /** A worker listens: at the first start and after each restart. */
  listening(slot: number, message: ListeningMessage): void;
  /** Workers keep failing to start (or the very first start failed): the pool gives up. */
  giveUp(err: WorkersError): void;
}

/**
 * The primary's workers: forks each, restarts one that dies with a growing delay, and gives
 * up when start-ups keep failing. Every worker is forked with `env` and its number.
 */
export class WorkerPool {
  private readonly slots: Slot[];
  private stopping = false;
  private cleanStop = true;
  private everListened = false;
  private startFailures = 0;
  private onEmpty: (() => void) | undefined;

  constructor(
    size: number,
    private readonly env: Record<string, string>,
    private readonly log: Logger,
    private readonly events: PoolEvents,
  ) {
    this.slots = Array.from({ length: size }, (_, i) => ({
      n: i + 1,
      worker: undefined,
      listening: false,
      startedAt: 0,
      crashes: 0,
      failure: undefined,
      restart: undefined,
    }));
  }

  get size(): number {
    return this.slots.length;
  }

  /** The worker of slot `n` while it serves. */
  listening(n: number): Worker | undefined {
    const slot = this.slots[n - 1];
    return slot?.listening ? slot.worker : undefined;
  }

  /** Every worker that serves now. */
  serving(): Worker[] {
    return this.slots.flatMap((s) => (s.listening && s.worker ? [s.worker] : []));
  }

  /** Forks the worker of slot `n`. */
  start(n: number): void {
    const slot = this.slots[n - 1];
    if (!slot || this.stopping) return;
    slot.restart = undefined;
    slot.listening = false;
    slot.failure = undefined;
    slot.startedAt = Date.now();
    const worker = cluster.fork({ ...this.env, [WORKER_SLOT_ENV]: String(n) });
    slot.worker = worker;
    worker.on("message", (raw) => {
      const message = ours<WorkerMessage>(raw);
      if (message?.latchkey === "listening") {
        slot.listening = true;
        this.everListened = true;
        this.startFailures = 0;
        // A stop sent while the worker was still loading its modules found no listener.
        if (this.stopping) send(worker, { latchkey: "stop" });
        else this.events.listening(n, message);
      } else if (message?.latchkey === "failed") {
        slot.failure = message;
      }
    });
    // A worker's channel can fail as it dies; its exit is what counts.
    worker.on("error", () => {});
    worker.on("exit", (code, signal) => this.exited(slot, worker, code, signal));
  }

  private exited(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    if (slot.worker !== worker) return;
    const wasListening = slot.listening;
    slot.worker = undefined;
    slot.listening = false;
    const workerPid = worker.process.pid;
    if (this.stopping) {
      if (code !== 0) this.cleanStop = false;
      this.log.info({ worker: slot.n, workerPid, code, signal }, "worker stopped");
      if (this.slots.every((s) => !s.worker)) this.onEmpty?.();
      return;
    }
    if (!wasListening) {
      this.startFailures++;
      const reason = slot.failure?.text.replace(/^latchkey: /, "") ?? describeExit(code, signal);
      this.log.error({ worker: slot.n, workerPid, code, signal, reason }, "worker failed to start");
      // The first start failing is the server's start failing: the same reason, at once,
      // as a single process would give. Later, a few tries ride out a passing trouble.
      if (!this.everListened) {
        this.events.giveUp(new WorkersError(reason, slot.failure?.exitCode ?? 1));
        return;
      }
      if (this.startFailures >= MAX_START_FAILURES) {
        const what = `workers failed to start ${this.startFailures} times in a row; the last: ${reason}`;
        this.events.giveUp(new WorkersError(what, 1));
        return;
      }
    } else {
      this.log.error({ worker: slot.n, workerPid, code, signal }, "worker exited unexpectedly");
    }
    if (Date.now() - slot.startedAt >= STABLE_AFTER_MS) slot.crashes = 0;
    const delayMs = restartDelayMs(slot.crashes);
    slot.crashes++;
    this.log.info({ worker: slot.n, delayMs }, "restarting worker");
    slot.restart = setTimeout(() => this.start(slot.n), delayMs);
  }

  /**
   * Asks every worker to stop (each drains and writes its events, as a single server does),
   * and resolves once all have exited: true when every one exited 0. One still running after
   * `timeoutMs` is killed.
   */
  stop(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    for (const slot of this.slots) {
      clearTimeout(slot.restart);
      if (slot.worker) send(slot.worker, { latchkey: "stop" });
    }
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.cleanStop = false;
        this.log.error({ timeoutMs }, "workers still running after the stop's bound; killing them");
        this.kill();
      }, timeoutMs);
      timer.unref();
      this.onEmpty = () => {
        clearTimeout(timer);
        resolve(this.cleanStop);
      };
      if (this.slots.every((s) => !s.worker)) this.onEmpty();
    });
  }

  /** Kills every worker now (a second signal: the operator does not want to wait). */
  kill(): void {
    this.stopping = true;
    for (const slot of this.slots) {
      clearTimeout(slot.restart);
      slot.worker?.process.kill("SIGKILL");
    }
  }
}

function send(worker: Worker, message: StopMessage): void {
  // A worker whose channel has closed is exiting anyway.
  worker.send(message, undefined, () => {});
}

function describeExit(code: number | null, signal: string | null): string {
  return signal ? `a worker was killed by ${signal}` : `a worker exited with code ${code}`;
}
