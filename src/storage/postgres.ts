import net from "node:net";
import type { Writable } from "node:stream";
import postgres from "postgres";
import {
  type Db,
  DbUnavailableError,
  isUnavailable,
  type Queryable,
  type QueryOptions,
} from "./db.js";

/** Options of the PostgreSQL adapter. */
export interface PostgresOptions {
  url: string;
  /** Pool size. */
  max?: number;
  /** Seconds to wait for a connection before the query fails with 503. */
  connectTimeoutSeconds?: number;
  /**
   * Longest one statement may run (0 or undefined: no bound). Set on each session, so it
   * also bounds lock waits: a statement cancelled by it fails as DbUnavailableError (503).
   */
  statementTimeoutMs?: number;
}

function wrap(err: unknown): unknown {
  return isUnavailable(err) && !(err instanceof DbUnavailableError)
    ? new DbUnavailableError(err)
    : err;
}

/** What postgres.js passes to a `socket` function: its parsed hosts, ports and socket path. */
export interface SocketTarget {
  host: string[];
  port: number[];
  path?: string | false;
}

/**
 * Opens postgres.js's connections with TCP_NODELAY, which postgres.js does not set. A COPY
 * sends its rows, then the five bytes of CopyDone in a second write; with Nagle's algorithm
 * that write waits until PostgreSQL acknowledges the rows, and PostgreSQL, with nothing to
 * answer yet, delays its acknowledgement (40 ms at least on Linux; ~90 ms a COPY here).
 * Measured: 5,000 events in 100-row COPYs took 4.6 s to write, so at a steady 5,000
 * verifications a second the event writer fell further behind every second; with
 * TCP_NODELAY 40-70 ms (bench/scenarios/event-writer.ts).
 *
 * The socket is returned before it connects, and connects in a microtask: postgres.js attaches
 * its listeners when its `await` of this function resumes, which is queued after that
 * microtask, and a failure to connect is emitted on a later tick. Connecting at once would
 * emit a failure found on the spot (EMFILE, an unreachable address) before anyone listens, an
 * uncaught exception; connecting any later would fail postgres.js's first write. As a socket
 * that connects (writes wait for the connection), postgres.js's connect timeout, errors,
 * reconnection and TLS upgrade treat it as one of its own.
 *
 * Of the hosts of a multi-host URL, connections go to the first until connecting to it
 * fails, then to the next, as postgres.js's own sockets do.
 */
export function noDelaySocket(): (target: SocketTarget) => net.Socket {
  let preferred = 0;
  return (target) => {
    const socket = new net.Socket().setNoDelay(true);
    let to: net.SocketConnectOpts;
    if (target.path) to = { path: target.path };
    else {
      const i = preferred % target.host.length;
      const host = target.host[i] as string;
      const port = target.port[i] ?? 5432;
      let connected = false;
      socket.once("connect", () => {
        connected = true;
      });
      socket.once("close", () => {
        if (!connected && preferred === i) preferred = (i + 1) % target.host.length;
      });
      // postgres.js names the host and port of a failed connection from these.
      Object.assign(socket, { host, port });
      to = { host, port };
    }
    queueMicrotask(() => socket.connect(to));
    return socket;
  };
}

/**
 * The Db port over postgres.js. Statements are prepared (postgres.js caches them per
 * connection), int8 is parsed to a JS number (every int8 Latchkey stores is bounded by
 * 2^53), and connection failures and cancelled statements surface as DbUnavailableError.
 */
export function openPostgres(options: PostgresOptions): Db {
  const sql = postgres(options.url, {
    max: options.max ?? 10,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    idle_timeout: 60,
    onnotice: () => {},
    // A session parameter sent when each connection starts: no extra round trip per query.
    ...(options.statementTimeoutMs
      ? { connection: { statement_timeout: options.statementTimeoutMs } }
      : {}),
    // Documented in postgres.js's README ("Custom socket"), missing from its type definitions.
    ...({ socket: noDelaySocket() } as object),
    // postgres.js waits longer and longer (up to 20 s) before reconnecting after failures, and
    // queued queries wait with it. While PostgreSQL is down a caller should get its 503 at once,
    // so reconnect attempts are capped at a quarter second.
    backoff: (retries: number) => Math.min(0.02 * 2 ** retries, 0.25),
    types: {
      bigint: {
        to: 20,
        from: [20],
        serialize: (x: number | bigint) => String(x),
        parse: (x: string) => Number(x),
      },
    },
  });

  const runner = (s: postgres.Sql | postgres.TransactionSql): Queryable => ({
    async query<T>(
      text: string,
      params: readonly unknown[] = [],
      options: QueryOptions = {},
    ): Promise<T[]> {
      try {
        const rows = await s.unsafe(text, params as postgres.ParameterOrJSON<never>[], {
          prepare: options.prepare ?? true,
        });
        return plainRows(rows) as T[];
      } catch (err) {
        throw wrap(err);
      }
    },
    async exec(script: string): Promise<void> {
      try {
        await s.unsafe(script, [], { prepare: false }).simple();
      } catch (err) {
        throw wrap(err);
      }
    },
    async copyCsv(target: string, csv: string | Uint8Array): Promise<void> {
      try {
        const copy = s.unsafe(`copy ${target} from stdin with (format csv)`);
        const refused = refusalOf(copy);
        const stream = await copy.writable();
        const chunk =
          typeof csv === "string" ? csv : Buffer.from(csv.buffer, csv.byteOffset, csv.byteLength);
        await Promise.race([endWith(stream, chunk), refused]);
      } catch (err) {
        throw wrap(err);
      }
    },
  });
  const root = runner(sql);

  return {
    engine: "postgres",
    query: root.query,
    exec: root.exec,
    copyCsv: root.copyCsv,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      try {
        return (await sql.begin((tx) => fn(runner(tx)))) as T;
      } catch (err) {
        throw wrap(err);
      }
    },
    async listen(channel, onMessage, onConnect) {
      try {
        const sub = await sql.listen(channel, onMessage, onConnect);
        return () => sub.unlisten();
      } catch (err) {
        throw wrap(err);
      }
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
    openPool: (bounds) =>
      openPostgres({ ...options, max: bounds.max, statementTimeoutMs: bounds.statementTimeoutMs }),
  };
}

/**
 * Writes the last chunk to a stream and settles when it has finished (or failed). Not
 * stream.pipeline: its clean-up aborts an AbortController without a reason, which builds a
 * DOMException with a stack trace on every call (~40 us, 0.8% of the request thread at 3,000
 * verifications a second, whose events go out as ~30 COPYs a second).
 */
function endWith(stream: Writable, chunk: string | Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (err: unknown) => {
      stream.off("finish", finished);
      reject(err);
    };
    const finished = () => {
      stream.off("error", failed);
      resolve();
    };
    stream.once("error", failed);
    stream.once("finish", finished);
    stream.end(chunk);
  });
}

/**
 * Rejects with the error of a COPY FROM STDIN that the server refuses once all its data is
 * sent. postgres.js 3.4.9 passes that error to the query, which has already resolved (to the
 * stream), and never settles the stream: the COPY would wait forever and, in a transaction,
 * the transaction would never end nor give its connection back. The query's reject is its
 * own property, so it can be watched.
 */
function refusalOf(query: object): Promise<never> {
  const q = query as { reject: (err: unknown) => unknown };
  return new Promise<never>((_, reject) => {
    const original = q.reject;
    q.reject = (err: unknown) => {
      reject(err);
      return original(err);
    };
  });
}

/**
 * The rows as ordinary objects. postgres.js builds a row by adding its columns one at a time
 * by name, which leaves V8 objects in dictionary mode, and such rows live on as cached key
 * records: the memory benchmark held ~4.3 KB of heap per cached record, ~2.7 KB with copies.
 * A copy has its fields in place, with one shape for all rows of a statement (as PGlite's).
 */
function plainRows(rows: readonly object[]): object[] {
  const out = new Array<object>(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = { ...rows[i] };
  return out;
}
