import { type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Db, Queryable } from "../storage/db.js";
import type { Tracing } from "./tracing.js";

/** The first keyword of a statement, upper-cased (`SELECT`, `INSERT`, `WITH`), or `SQL`. */
export function operationOf(text: string): string {
  const m = /^\s*([A-Za-z]+)/.exec(text);
  return m ? (m[1] as string).toUpperCase() : "SQL";
}

/**
 * The Db port with a CLIENT span per query, script, COPY and transaction, made only inside a
 * traced call (as children of its span; the statements of a transaction are children of the
 * transaction's span). A span names the statement's operation and the engine, never the
 * statement's parameters or rows. Work outside any call (migrations, background writes) runs
 * untraced. Used only while tracing is on: the adapters themselves know nothing of it.
 */
export function tracedDb(db: Db, tracing: Tracing): Db {
  const engine = db.engine;
  /** Runs `run` in a span named `name` when a call is being traced, else just runs it. */
  const inSpan = <T>(name: string, operation: string, run: () => Promise<T>): Promise<T> => {
    const parent = tracing.active();
    if (trace.getSpan(parent) === undefined) return run();
    const span = tracing.tracer.startSpan(
      name,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "db.system.name": "postgresql",
          "db.operation.name": operation,
          "latchkey.db.engine": engine,
        },
      },
      parent,
    );
    return tracing.with(trace.setSpan(parent, span), () => ended(span, run()));
  };
  const traced = (q: Queryable): Queryable => ({
    query: (text, params, options) => {
      const op = operationOf(text);
      return inSpan(op, op, () => q.query(text, params, options));
    },
    exec: (script) => inSpan("SCRIPT", "SCRIPT", () => q.exec(script)),
    copyCsv: (target, csv) => inSpan("COPY", "COPY", () => q.copyCsv(target, csv)),
  });
  const root = traced(db);
  return {
    engine,
    query: root.query,
    exec: root.exec,
    copyCsv: root.copyCsv,
    transaction: (fn) =>
      inSpan("TRANSACTION", "TRANSACTION", () => db.transaction((tx) => fn(traced(tx)))),
    listen: (channel, onMessage, onConnect) => db.listen(channel, onMessage, onConnect),
    close: () => db.close(),
    ...(db.openPool
      ? { openPool: (bounds) => tracedDb(db.openPool?.(bounds) as Db, tracing) }
      : {}),
  };
}

/** Ends `span` when `work` settles, marking it failed when `work` rejects. */
export async function ended<T>(span: Span, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === "string") span.setAttribute("error.type", code);
    throw err;
  } finally {
    span.end();
  }
}
