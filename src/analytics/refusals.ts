import type { Logger } from "../log.js";
import { errorCode, isTransientConflict, isUnavailable } from "../storage/db.js";
import type { AnalyticsEvent } from "../storage/queries/events.js";

/**
 * SQLSTATE classes of a database that answered and refused what it was sent: a data
 * exception (22: a value out of range, say), an integrity constraint (23), a program limit
 * (54: an index entry too large). Another write of the same rows fails the same way.
 */
const REFUSED_CLASSES = new Set(["22", "23", "54"]);

/** How the database failed a write of events, for the writer's next step. */
export type WriteFailure =
  /** Unreachable, or a conflict with another transaction: write the same again later. */
  | "outage"
  /** It answered and refused these rows: find the event it refuses. */
  | "refused"
  /** Anything else (no SQLSTATE, an I/O error...): retry a few times, then treat as refused. */
  | "unclear";

/** Classifies an error of an event write. */
export function writeFailure(err: unknown): WriteFailure {
  if (isUnavailable(err) || isTransientConflict(err)) return "outage";
  const code = errorCode(err);
  if (code !== undefined && code.length === 5 && REFUSED_CLASSES.has(code.slice(0, 2)))
    return "refused";
  return "unclear";
}

/** Log lines about refused events at most this often; the metric counts every one. */
const LOG_INTERVAL_MS = 60_000;

/**
 * Logs events the database refused: the first one at once, with its error, then at most one
 * line a minute with how many more there were. A flood of bad events, or a bad event split
 * out of its batch over several tries, is one line, not one per event or per try.
 */
export class RefusalLog {
  private loggedAt = Number.NEGATIVE_INFINITY;
  private unlogged = 0;

  constructor(private readonly log: Logger) {}

  refused(err: unknown, event: AnalyticsEvent): void {
    this.unlogged++;
    const now = performance.now();
    if (now - this.loggedAt < LOG_INTERVAL_MS) return;
    // The error's message only: a driver error may carry the whole row (40 kB of tags).
    const message = err instanceof Error ? err.message.slice(0, 300) : String(err).slice(0, 300);
    this.log.error(
      {
        refused: this.unlogged,
        code: errorCode(err),
        reason: message,
        kind: event.kind,
        workspaceId: event.workspaceId,
        requestId: event.requestId,
      },
      "analytics events dropped: the database refuses them (counted in latchkey_analytics_events_rejected_total)",
    );
    this.loggedAt = now;
    this.unlogged = 0;
  }
}
