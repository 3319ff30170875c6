import type { Worker } from "node:cluster";
import type { ReadinessReport } from "../health/readiness.js";

// What the primary of WORKERS and its workers say to each other over the cluster's IPC
// channel. Every message carries `latchkey`, so that prom-client's or Node's own messages on
// the same channel are told apart.

/** The environment variable that tells a forked process which worker it is (1..n). */
export const WORKER_SLOT_ENV = "LATCHKEY_WORKER";

/** From a worker: it serves, on these ports. */
export interface ListeningMessage {
  latchkey: "listening";
  port: number;
  grpcPort: number | undefined;
  engine: string;
}

/** From a worker: its start failed; the line the CLI would have printed, and its exit code. */
export interface FailedMessage {
  latchkey: "failed";
  text: string;
  exitCode: number;
}

/** From the primary: a question, answered by an AnswerMessage with the same id. */
export interface QuestionMessage {
  latchkey: "ready?" | "metrics?";
  id: number;
}

/** From a worker: the answer to a question (a readiness report, its metrics as JSON). */
export interface AnswerMessage {
  latchkey: "answer";
  id: number;
  value?: unknown;
  error?: string;
}

/** From the primary: stop gracefully (drain, write the buffered events), then exit. */
export interface StopMessage {
  latchkey: "stop";
}

export type WorkerMessage = ListeningMessage | FailedMessage | AnswerMessage;
export type PrimaryMessage = QuestionMessage | StopMessage;

/** The message if it is one of ours, else undefined. */
export function ours<T extends { latchkey: string }>(message: unknown): T | undefined {
  return typeof message === "object" &&
    message !== null &&
    typeof (message as { latchkey?: unknown }).latchkey === "string"
    ? (message as T)
    : undefined;
}

/** The workers' failure, as the CLI reports it: one line, and the exit code to end with. */
export class WorkersError extends Error {
  override name = "WorkersError";
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

let nextQuestion = 0;

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/**
 * The questions each worker has not answered yet, by id. One listener per worker reads every
 * answer (a listener per question would pile up under concurrent scrapes and probes).
 */
const pendingOf = new WeakMap<Worker, Map<number, Pending>>();

function questionsOf(worker: Worker): Map<number, Pending> {
  const known = pendingOf.get(worker);
  if (known) return known;
  const questions = new Map<number, Pending>();
  pendingOf.set(worker, questions);
  worker.on("message", (message: unknown) => {
    const answer = ours<WorkerMessage>(message);
    if (answer?.latchkey !== "answer") return;
    const asked = questions.get(answer.id);
    if (answer.error === undefined) asked?.resolve(answer.value);
    else asked?.reject(new Error(answer.error));
  });
  worker.on("exit", () => {
    for (const asked of [...questions.values()]) asked.reject(new Error("the worker exited"));
  });
  return questions;
}

/**
 * Asks a worker and resolves with its answer; rejects when it does not answer within
 * `timeoutMs` or exits first, so that nothing waits on a worker that is gone.
 */
export function ask(worker: Worker, question: QuestionMessage["latchkey"], timeoutMs: number) {
  const id = nextQuestion++;
  const questions = questionsOf(worker);
  return new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => {
      questions.delete(id);
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const settle =
      <T>(then: (value: T) => void) =>
      (value: T) => {
        clearTimeout(timer);
        questions.delete(id);
        then(value);
      };
    const asked = { resolve: settle(resolve), reject: settle(reject) };
    questions.set(id, asked);
    // A worker whose channel closed meanwhile gets an error here, not an unhandled 'error'.
    worker.send({ latchkey: question, id } satisfies QuestionMessage, undefined, (err) => {
      if (err) asked.reject(err);
    });
  });
}

/** A readiness report received from a worker (checked: it crossed a process boundary). */
export function asReport(value: unknown): ReadinessReport {
  const r = value as Partial<ReadinessReport> | undefined;
  return {
    ready: r?.ready === true,
    failing: Array.isArray(r?.failing) ? r.failing.map(String) : ["workers"],
  };
}
