import type { Logger } from "../log.js";

/** One dependency the server needs to answer calls: the database, Redis. */
export interface ReadinessCheck {
  /** The part named in a report when this check fails (`database`, `redis`). */
  readonly name: string;
  /**
   * Resolves when the dependency is usable; rejects when it is not. A rejection with a
   * ReadinessFailure names a more precise part than `name` (`migrations`).
   */
  probe(): Promise<void>;
}

/**
 * A failing check that names the part at fault, when it is not the check's own name; or the
 * parts, when it stands for another process's readiness (a worker's `database`, `redis`).
 */
export class ReadinessFailure extends Error {
  override name = "ReadinessFailure";
  readonly parts: readonly string[];
  constructor(part: string | readonly string[], message: string) {
    super(message);
    this.parts = typeof part === "string" ? [part] : part;
  }
}

/** Whether the server can answer calls, and if not, which parts fail. */
export interface ReadinessReport {
  readonly ready: boolean;
  /** Failing parts, in the order of the checks; `shutdown` once the server is stopping. */
  readonly failing: readonly string[];
}

/** How readiness is asked. */
export interface ReadinessOptions {
  /** Longest one check may take; a check still pending then counts as failing. */
  timeoutMs: number;
  /** How long a report is reused: a probe every 100 ms costs what one every second does. */
  cacheMs: number;
  log?: Logger;
  /** The clock of the cache, in milliseconds. */
  now?: () => number;
}

const STOPPING: ReadinessReport = { ready: false, failing: ["shutdown"] };

type Outcome = { ok: true } | { ok: false; parts: readonly string[]; reason: string };

/**
 * Readiness of the server: its checks, run at most once per `cacheMs` however often
 * readiness is asked, each bounded by `timeoutMs`. A check that has not settled is not
 * started again (a hung database holds one probe, not one per request), and nothing here
 * ever rejects. `stop()` turns readiness off for good and tells the listeners at once, so
 * a stopping server is reported unready before it drains its connections.
 */
export class Readiness {
  private last: { report: ReadinessReport; at: number } | undefined;
  private evaluating: Promise<ReadinessReport> | undefined;
  private stopped = false;
  private readonly pending = new Map<string, Promise<void>>();
  private readonly listeners = new Set<(report: ReadinessReport) => void>();
  private holders = 0;
  private poll: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    private readonly checks: readonly ReadinessCheck[],
    private readonly options: ReadinessOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** The current report: the cached one while fresh, else a new evaluation. */
  report(): Promise<ReadinessReport> {
    if (this.stopped) return Promise.resolve(STOPPING);
    const last = this.last;
    if (last && this.now() - last.at < this.options.cacheMs) return Promise.resolve(last.report);
    this.evaluating ??= this.evaluate().finally(() => {
      this.evaluating = undefined;
    });
    return this.evaluating;
  }

  /** The last report made (undefined before the first). */
  latest(): ReadinessReport | undefined {
    return this.stopped ? STOPPING : this.last?.report;
  }

  /** Calls `listener` with each report that differs from the one before; returns the undo. */
  onChange(listener: (report: ReadinessReport) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Keeps the report fresh while anyone holds it: readiness is then evaluated every
   * `cacheMs` (at least 100 ms apart), so a change reaches the `onChange` listeners within
   * about that period without anyone asking. Returns the function that lets go.
   */
  keepFresh(): () => void {
    this.holders++;
    if (!this.poll && !this.stopped) {
      this.poll = setInterval(() => void this.report(), Math.max(this.options.cacheMs, 100));
      this.poll.unref();
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.holders--;
      if (this.holders === 0) this.stopPolling();
    };
  }

  /** Turns readiness off for good (the server is stopping) and tells the listeners now. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopPolling();
    this.publish(STOPPING);
  }

  private stopPolling(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }

  private async evaluate(): Promise<ReadinessReport> {
    const outcomes = await Promise.all(this.checks.map((c) => this.run(c)));
    if (this.stopped) return STOPPING;
    const failed = outcomes.filter((o) => !o.ok);
    const report: ReadinessReport = {
      ready: failed.length === 0,
      failing: [...new Set(failed.flatMap((o) => o.parts))],
    };
    if (this.last?.report.ready !== report.ready) {
      if (report.ready) this.options.log?.info("ready");
      else this.options.log?.warn({ failing: failed }, "not ready");
    }
    this.publish(report);
    return report;
  }

  private publish(report: ReadinessReport): void {
    const before = this.last?.report;
    this.last = { report, at: this.now() };
    if (before && sameReport(before, report)) return;
    for (const listener of this.listeners) listener(report);
  }

  /** Runs one check within the timeout, reusing its probe while an earlier one is pending. */
  private run(check: ReadinessCheck): Promise<Outcome> {
    let probe = this.pending.get(check.name);
    if (!probe) {
      const started = check.probe().finally(() => this.pending.delete(check.name));
      this.pending.set(check.name, started);
      probe = started;
    }
    const timeoutMs = this.options.timeoutMs;
    return new Promise<Outcome>((resolve) => {
      const timer = setTimeout(
        () =>
          resolve({ ok: false, parts: [check.name], reason: `no answer within ${timeoutMs} ms` }),
        timeoutMs,
      );
      (probe as Promise<void>).then(
        () => {
          clearTimeout(timer);
          resolve({ ok: true });
        },
        (err: unknown) => {
          clearTimeout(timer);
          const parts = err instanceof ReadinessFailure ? err.parts : [check.name];
          resolve({ ok: false, parts, reason: err instanceof Error ? err.message : String(err) });
        },
      );
    });
  }
}

function sameReport(a: ReadinessReport, b: ReadinessReport): boolean {
  return a.ready === b.ready && a.failing.join() === b.failing.join();
}
