import type { App } from "../app.js";
import type { Config } from "../config.js";
import { createLogger } from "../log.js";
import { describeFailure } from "./failure.js";
import type { Io } from "./io.js";
import { launchApp } from "./launch.js";
import {
  type AnswerMessage,
  ours,
  type PrimaryMessage,
  type QuestionMessage,
  type WorkerMessage,
} from "./worker-protocol.js";

/** Sends to the primary; `then` runs once it is sent, or once it could not be. */
function tell(message: WorkerMessage, then?: () => void): void {
  if (!process.send) {
    then?.();
    return;
  }
  process.send(message, undefined, {}, () => then?.());
}

/**
 * One worker of WORKERS: the same server as a single `serve`, without the admin port (the
 * primary serves it for all workers, asking each for its readiness and metrics over IPC).
 * Its log lines carry its number. It stops when the primary says so, or when the primary is
 * gone; it reports its start, or the failure of it, to the primary instead of the terminal.
 */
export async function serveWorker(config: Config, io: Io, slot: number): Promise<void> {
  const log = createLogger(config.logLevel, io.stdout).child({ worker: slot });
  // The primary decides when workers stop. A Ctrl-C in a terminal reaches every process of
  // the group: a worker that stopped on it by itself would look like a crash to the primary,
  // and the primary's own stop message would then be a second signal, cutting the drain.
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => {});
  let app: App | undefined;
  let stopRequested = false;
  const stop = () => {
    stopRequested = true;
    if (!app) return; // stopped as soon as it has started
    const running = app;
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  const answer = async (question: QuestionMessage) => {
    const reply: AnswerMessage = { latchkey: "answer", id: question.id };
    try {
      if (!app) throw new Error("the worker has not started");
      reply.value =
        question.latchkey === "ready?"
          ? await app.readiness.report()
          : await app.metrics.registry.getMetricsAsJSON();
    } catch (err) {
      reply.error = err instanceof Error ? err.message : String(err);
    }
    tell(reply);
  };
  process.on("message", (raw) => {
    const message = ours<PrimaryMessage>(raw);
    if (message?.latchkey === "stop") {
      if (!stopRequested) log.info("shutting down");
      stop();
    } else if (message) {
      void answer(message);
    }
  });
  // The primary is gone (killed): nobody would stop this worker, so it stops itself, as
  // gracefully as if told to.
  process.on("disconnect", () => {
    if (!stopRequested) log.warn("the primary process is gone; shutting down");
    stop();
  });
  try {
    app = await launchApp(config, log, false);
  } catch (err) {
    const failure = describeFailure(err);
    tell({ latchkey: "failed", text: failure.text, exitCode: failure.exitCode }, () =>
      process.exit(failure.exitCode),
    );
    return;
  }
  tell({
    latchkey: "listening",
    port: app.port,
    grpcPort: app.grpcPort,
    engine: app.deps.db.engine,
  });
  if (stopRequested) stop();
}
