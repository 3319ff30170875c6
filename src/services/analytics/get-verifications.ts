import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  GetVerificationsRequest,
  GetVerificationsResponseSchema,
} from "../../../gen/latchkey/v2/analytics_pb.js";
import { checkQuery, confirmWrapped, loadQueryParser } from "../../analytics/query.js";
import { QueryRefused } from "../../domain/analytics/sql-guard.js";
import { catalog } from "../../errors/catalog.js";
import { errors, ServiceError } from "../../errors/service-error.js";
import { errorCode } from "../../storage/db.js";
import { analyticsRun, analyticsStatement } from "../../storage/queries/analytics.js";
import { authorizeRows } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";

/** Largest JSON result a query may return. */
const MAX_RESULT_BYTES = 10 * 1024 * 1024;

function tooManyQueries(cap: number): ServiceError {
  return new ServiceError(
    catalog.queryQuotaExceeded,
    `This workspace runs ${cap} analytics queries at once already; retry when one of them has finished.`,
  );
}

/**
 * Runs one read-only SELECT over the caller's virtual tables and returns its rows as objects.
 * The query is parsed with PostgreSQL's parser and checked against allow-lists before it runs;
 * it runs read-only on the analytics pool, with a timeout, bounded work memory, and a row and
 * byte cap the database itself applies, and sees only its workspace (and, for an API-scoped
 * root key, only those APIs). A workspace runs a few queries at once at most (429 beyond).
 */
export async function getVerifications(
  deps: Deps,
  req: GetVerificationsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetVerificationsResponseSchema>> {
  const principal = principalOf(ctx);
  const readable = authorizeRows(ctx, "apiId");
  const apiIds = readable === "all" ? null : readable;
  const { analyticsMaxRows: maxRows, analyticsTimeoutMs: timeoutMs } = deps.config;
  const cap = deps.config.analyticsMaxConcurrentPerWorkspace;
  const release = deps.slots.analytics.take(principal.workspaceId);
  if (!release) throw tooManyQueries(cap);
  let texts: (string | null)[];
  try {
    await loadQueryParser();
    const checked = checkQuery(req.query);
    const statement = analyticsStatement(
      deps.analyticsSchema,
      checked.text,
      checked.tables,
      maxRows,
      MAX_RESULT_BYTES,
    );
    confirmWrapped(statement, checked);
    texts = await analyticsRun(deps.analyticsDb, statement, checked.tables.size > 0, {
      workspaceId: principal.workspaceId,
      apiIds,
      timeoutMs,
    });
  } catch (err) {
    throw translate(err, timeoutMs);
  } finally {
    release();
  }
  if (texts.length > maxRows) throw errors.queryRowsLimit(maxRows);
  // The database sends a row's text only while the running total stays within the cap.
  if (texts.includes(null)) throw errors.queryResultTooLarge(MAX_RESULT_BYTES);
  return { data: texts.map((t) => JSON.parse(t as string) as JsonObject) };
}

/** PostgreSQL errors a query can cause, by SQLSTATE class, as the caller's error. */
function translate(err: unknown, timeoutMs: number): unknown {
  if (err instanceof QueryRefused) return errors.analyticsQueryRefused(err.kind, err.message);
  const code = errorCode(err);
  if (code === undefined) return err;
  if (code === "57014") return errors.queryTimeout(timeoutMs);
  if (code === "42P01") return errors.analyticsQueryRefused("table", (err as Error).message);
  if (code === "42883") return errors.analyticsQueryRefused("function", (err as Error).message);
  // Syntax and name errors (42), bad values (22), unsupported features (0A), program limits
  // such as too many arguments or a too complex expression (54), a write attempted in the
  // read-only transaction (25): the query's fault.
  if (/^(42|22|0A|2F|21|54|25)/.test(code))
    return errors.analyticsQueryRefused("query", (err as Error).message);
  // Too many connections is the database's state, not the query's: 503.
  if (code === "53300") return err;
  // Out of memory, disk full, temp_file_limit passed (53400): the query's size.
  if (code.startsWith("53")) return errors.queryResultTooLarge(MAX_RESULT_BYTES);
  return err;
}
