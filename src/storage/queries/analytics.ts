import type { Db } from "../db.js";

/**
 * The definition of each virtual table over the physical tables, for one workspace ($1) and,
 * for API-scoped root keys, the APIs in $2 (null: every API). Physical names are qualified
 * with the schema because the query runs with `search_path = pg_catalog`, where none of
 * Latchkey's tables can be named.
 */
function definitions(schema: string): Record<string, string> {
  const rollup = (table: string) =>
    `select time, api_id, key_id, identity_id, external_id, outcome, tags, count, spent_credits
     from ${schema}.${table}
     where workspace_id = $1 and ($2::text[] is null or api_id = any ($2::text[]))`;
  return {
    key_verifications_v1: `select time, request_id, api_id, key_id, identity_id, external_id,
       outcome, tags, spent_credits
     from ${schema}.key_verifications
     where workspace_id = $1 and ($2::text[] is null or api_id = any ($2::text[]))`,
    key_verifications_per_minute_v1: rollup("verifications_per_minute"),
    key_verifications_per_hour_v1: rollup("verifications_per_hour"),
    key_verifications_per_day_v1: rollup("verifications_per_day"),
    key_verifications_per_month_v1: rollup("verifications_per_month"),
    // Rate-limit decisions belong to no API: API-scoped keys see none.
    ratelimits_v1: `select time, request_id, namespace_id, identifier, passed, cost,
       window_limit as "limit", duration_ms as duration, remaining, override_id
     from ${schema}.ratelimit_events
     where workspace_id = $1 and $2::text[] is null`,
  };
}

/** Where Latchkey's tables live: the schema the connection creates tables in. */
export async function analyticsSchema(db: Db): Promise<string> {
  const rows = await db.query<{ schema: string }>("select current_schema() as schema");
  const schema = rows[0]?.schema ?? "public";
  return `"${schema.replaceAll('"', '""')}"`;
}

/**
 * The statement that runs a checked query: the virtual tables it reads as CTEs, the query
 * as a sub-select, each row as one JSON text (PostgreSQL renders numbers, arrays and
 * timestamps), at most `maxRows + 1` rows so the caller can tell the cap was passed.
 * A row's text is sent only while the running total of the texts so far, this one
 * included, is at most `maxBytes`; past it the row is null. So the server receives at most
 * `maxBytes` of text and `maxRows + 1` rows whatever the query builds, and a null row means
 * the result is too large.
 * The query text comes from the guard, which parsed and checked it; the caller confirms
 * the result still holds exactly that query.
 */
export function analyticsStatement(
  schema: string,
  query: string,
  tables: ReadonlySet<string>,
  maxRows: number,
  maxBytes: number,
): string {
  const defs = definitions(schema);
  const ctes = [...tables].map((t) => {
    const def = defs[t];
    if (def === undefined) throw new TypeError(`no definition for virtual table ${t}`);
    return `${t} as (${def})`;
  });
  const withClause = ctes.length > 0 ? `with ${ctes.join(",\n")}\n` : "";
  // The window sum runs over the rows in the query's own order (no ordering of its own) and
  // streams: each row is passed on as soon as it is summed, so the limit still stops the scan.
  const json = "row_to_json(latchkey_row)::text";
  const total = `sum(octet_length(${json})) over (rows unbounded preceding)`;
  return `${withClause}select case when ${total} <= ${Math.trunc(maxBytes)} then ${json} end as row from (\n${query}\n) as latchkey_row limit ${Math.trunc(maxRows) + 1}`;
}

/** Bounds of one analytics run. */
export interface AnalyticsRunOptions {
  workspaceId: string;
  apiIds: readonly string[] | null;
  timeoutMs: number;
}

/**
 * Memory one sort or hash of an analytics query may use before it spills to temporary files
 * (PostgreSQL's default is 4MB; hashes may use twice this).
 */
export const ANALYTICS_WORK_MEM = "8MB";
/** Temporary files one analytics query may write; applied when the role may set it. */
export const ANALYTICS_TEMP_FILE_LIMIT = "256MB";

/**
 * Runs an analytics statement in a read-only transaction with a statement timeout, bounded
 * work memory and temporary files, UTC, and `search_path = pg_catalog`; returns the rows'
 * JSON texts (null past the byte cap of `analyticsStatement`). Not prepared: each query
 * text is new.
 */
export async function analyticsRun(
  db: Db,
  statement: string,
  usesParams: boolean,
  options: AnalyticsRunOptions,
): Promise<(string | null)[]> {
  return db.transaction(async (tx) => {
    await tx.query("set transaction read only");
    // temp_file_limit is a superuser setting: set it only where that is allowed.
    await tx.query(
      `select set_config('statement_timeout', $1, true), set_config('timezone', 'UTC', true),
         set_config('search_path', 'pg_catalog', true), set_config('work_mem', $2, true),
         case when current_setting('is_superuser') = 'on'
           then set_config('temp_file_limit', $3, true) end`,
      [String(options.timeoutMs), ANALYTICS_WORK_MEM, ANALYTICS_TEMP_FILE_LIMIT],
    );
    const params = usesParams ? [options.workspaceId, options.apiIds] : [];
    // statement_timeout bounds it on PostgreSQL; the embedded engine, which cannot honour
    // it, cancels the statement itself past `timeoutMs` (the same 57014).
    const rows = await tx.query<{ row: string | null }>(statement, params, {
      prepare: false,
      timeoutMs: options.timeoutMs,
    });
    return rows.map((r) => r.row);
  });
}
