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
 * The query text comes from the guard, which parsed and checked it; the caller confirms
 * the result still holds exactly that query.
 */
export function analyticsStatement(
  schema: string,
  query: string,
  tables: ReadonlySet<string>,
  maxRows: number,
): string {
  const defs = definitions(schema);
  const ctes = [...tables].map((t) => {
    const def = defs[t];
    if (def === undefined) throw new TypeError(`no definition for virtual table ${t}`);
    return `${t} as (${def})`;
  });
  const withClause = ctes.length > 0 ? `with ${ctes.join(",\n")}\n` : "";
  return `${withClause}select row_to_json(latchkey_row)::text as row from (\n${query}\n) as latchkey_row limit ${maxRows + 1}`;
}

/** Bounds of one analytics run. */
export interface AnalyticsRunOptions {
  workspaceId: string;
  apiIds: readonly string[] | null;
  timeoutMs: number;
}

/**
 * Runs an analytics statement in a read-only transaction with a statement timeout, UTC, and
 * `search_path = pg_catalog`; returns the rows' JSON texts. Not prepared: each query text
 * is new.
 */
export async function analyticsRun(
  db: Db,
  statement: string,
  usesParams: boolean,
  options: AnalyticsRunOptions,
): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query("set transaction read only");
    await tx.query(
      `select set_config('statement_timeout', $1, true), set_config('timezone', 'UTC', true),
         set_config('search_path', 'pg_catalog', true)`,
      [String(options.timeoutMs)],
    );
    const params = usesParams ? [options.workspaceId, options.apiIds] : [];
    const rows = await tx.query<{ row: string }>(statement, params, { prepare: false });
    return rows.map((r) => r.row);
  });
}
