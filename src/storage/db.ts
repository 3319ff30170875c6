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
  /**
   * Longest this statement may run, in milliseconds, on the embedded engine (which has no
   * statement_timeout): past it the statement is cancelled and fails with SQLSTATE 57014,
   * and its transaction with it. PostgreSQL bounds statements with statement_timeout instead.
   */
  timeoutMs?: number;
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

/** Bounds of a pool of connections. */
export interface PoolBounds {
  /** Connections at most. */
  max: number;
  /** Longest one statement may run before the database cancels it; 0 or undefined: no bound. */
  statementTimeoutMs?: number;
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
  /**
   * Opens another pool of connections to the same database with its own bounds, closed by
   * its own `close()`, so one kind of work (analytics) cannot take the connections of the
   * rest. Absent on an engine with a single connection (PGlite): use this Db itself.
   */
  openPool?(bounds: PoolBounds): Db;
}

/**
 * Thrown by the adapters when the database cannot be reached (refused, timed out,
 * shut down, out of connections). Procedures answer it with 503, never with a verdict.
 */
export class DbUnavailableError extends Error {
  override name = "DbUnavailableError";
  /** The driver's code of the cause (a SQLSTATE, a Node errno name), if any. */
  readonly code: string | undefined;
  constructor(cause: unknown) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.code = errorCode(cause);
  }
}

/**
 * 57014: a statement cancelled, by the statement timeout or an operator. It did not take
 * effect (its transaction rolls back) and running it again later is safe, like a lost
 * connection; the request's inputs were within bounds, so it is not the caller's fault.
 */
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "53400", "57014"]);
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

/**
 * The unique index (or constraint) a unique violation broke, undefined for any other error.
 * postgres.js names it `constraint_name`, PGlite `constraint`.
 */
export function violatedUniqueIndex(err: unknown): string | undefined {
  if (!isUniqueViolation(err)) return undefined;
  const e = err as { constraint_name?: unknown; constraint?: unknown };
  const name = e.constraint_name ?? e.constraint;
  return typeof name === "string" ? name : undefined;
}
