import { pino } from "pino";

/** The structured logger. */
export type Logger = pino.Logger;

/**
 * Creates the JSON logger. Authorization headers are redacted wherever they appear;
 * plaintext keys are never passed to the logger in the first place.
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
    destination,
  );
}
