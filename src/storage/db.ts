/**
 * A row as returned by a query: column name to value. int8 columns arrive as numbers and
 * jsonb as parsed JSON. Pass jsonb parameters as JSON text cast in SQL, `$1::text::jsonb`
 * (postgres.js would encode a string bound straight to jsonb a second time).
 */
export type Row = Record<string, unknown>;

/** How one query runs. */
export interface QueryOptions {
  /**
   * false: do not keep a prepared statement for this text (for texts that rarely repeat, such
   * as analytics queries, which would otherwise fill every connection's statement cache).
   */
  prepare?: boolean;
}

/** Something that runs SQL with `$1`-style bound parameters. */
export interface Queryable {
  query<T = Row>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  /**
   * Appends rows with `copy <target> from stdin with (format csv)`: `target` is a table and
   * its column list (fixed text, never input), `csv` the rows as text or UTF-8 bytes (see
   * `storage/csv.ts`).
   */
  copyCsv(target: string, csv: string | Uint8Array): Promise<void>;
}

/**
 * The Db port: the only way the rest of Latchkey reaches the database. Two adapters
 * implement it (postgres.js and PGlite); driver specifics stay inside them.
 */
export interface Db extends Queryable {
  readonly engine: "postgres" | "pglite";
  /** Runs `fn` in a transaction; it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Subscribes to NOTIFY on `channel`. `onConnect` runs each time the listening session
   * is (re)established, so a caller can drop state it may have missed meanwhile.
   * Resolves to a function that unsubscribes.
   */
  listen(
    channel: string,
    onMessage: (payload: string) => void,
    onConnect?: () => void,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * Thrown by the adapters when the database cannot be reached (refused, timed out,
 * shut down, out of connections). Procedures answer it with 503, never with a verdict.
 */
export class DbUnavailableError extends Error {
  override name = "DbUnavailableError";
  constructor(cause: unknown) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "53400"]);
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  // No route to the database's network or host.
  "ENETUNREACH",
  "EHOSTUNREACH",
  // No descriptor left for a connection: this process cannot reach the database for now.
  "EMFILE",
  "ENFILE",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
]);

/** The `code` a driver error carries (a SQLSTATE, a Node errno name), if it is a string. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** True when a driver error means "the database is not reachable" rather than "bad SQL". */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof DbUnavailableError) return true;
  const code = errorCode(err);
  if (code === undefined) return false;
  return UNAVAILABLE_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith("08");
}

/**
 * True when PostgreSQL aborted a transaction only because of another one running at the
 * same time (deadlock 40P01, serialization failure 40001): running it again succeeds.
 */
export function isTransientConflict(err: unknown): boolean {
  const code = errorCode(err);
  return code === "40P01" || code === "40001";
}

/** True when a driver error is a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return errorCode(err) === "23505";
}
