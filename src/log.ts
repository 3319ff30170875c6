import { pino } from "pino";

/** The structured logger. */
export type Logger = pino.Logger;

/**
 * Creates the JSON logger. Authorization headers are redacted wherever they appear;
 * plaintext keys are never passed to the logger in the first place.
 *
 * By default it writes synchronously to stdout. pino's own default writes asynchronously and
 * flushes synchronously on exit, and that flush retries a broken pipe forever: a server whose
 * log reader had gone (a log shipper restarted, `serve | head`) never finished exiting on
 * SIGTERM. In sync mode a broken pipe just stops the logging. Nothing is logged per request
 * above debug, so the synchronous writes are not on the hot path.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "latchkey", pid: process.pid },
      redact: {
        paths: ["authorization", "*.authorization", "headers.authorization", "key", "*.key"],
        censor: "[redacted]",
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
