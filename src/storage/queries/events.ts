import type { RollupSource } from "../../domain/analytics/rollups.js";
import { csvBoolean, csvInteger, csvText, csvTextArray } from "../csv.js";
import { readCsvRows, readTextArray } from "../csv-read.js";
import type { Db, Queryable } from "../db.js";

/**
 * One verification, as analytics reads it: the rollup dimensions and sums (time, workspace, API,
 * key, identity, outcome, tags, credits spent) plus the request id. The workspace is the key's,
 * or the caller's when the key was not found (a verification with neither is not stored).
 */
export interface VerificationEvent extends RollupSource {
  requestId: string;
}

/** One rate-limit decision of the ratelimit namespace, as analytics reads it. */
export interface RatelimitEvent {
  time: number;
  workspaceId: string;
  namespaceId: string;
  identifier: string;
  passed: boolean;
  cost: number;
  limit: number;
  durationMs: number;
  remaining: number;
  overrideId: string | null;
  requestId: string;
}

/** An event of either kind, tagged. */
export type AnalyticsEvent =
  | ({ kind: "verification" } & VerificationEvent)
  | ({ kind: "ratelimit" } & RatelimitEvent);

/** The tables partitioned by day: raw events (time in Unix ms) and the minute rollup. */
export type EventTable = "key_verifications" | "ratelimit_events" | "verifications_per_minute";

/** Every daily-partitioned table, for retention. */
export const EVENT_TABLES: readonly EventTable[] = [
  "key_verifications",
  "ratelimit_events",
  "verifications_per_minute",
];

/** A partition bound: Unix ms for the raw tables, a UTC timestamp for the rollup. */
function bound(table: EventTable, ms: number): string {
  return table === "verifications_per_minute" ? `'${new Date(ms).toISOString()}'` : String(ms);
}

const DAY_MS = 86_400_000;
/** Serialises partition creation across processes. */
const PARTITION_LOCK_ID = 727_274_003;

/** The name of the daily partition of `table` that holds `time`: <table>_YYYYMMDD. */
export function partitionName(table: EventTable, time: number): string {
  return `${table}_${new Date(time).toISOString().slice(0, 10).replaceAll("-", "")}`;
}

/**
 * Creates the daily partitions of `table` holding these times (Unix ms), if they do not exist.
 * The table names come from a fixed list and a formatted date (digits only), never from input.
 */
export async function ensureEventPartitions(
  db: Db,
  table: EventTable,
  times: Iterable<number>,
): Promise<void> {
  for (const day of new Set([...times].map((t) => Math.floor(t / DAY_MS)))) {
    const from = day * DAY_MS;
    await db.transaction(async (tx) => {
      await tx.query("select pg_advisory_xact_lock($1)", [PARTITION_LOCK_ID]);
      await tx.exec(
        `create table if not exists ${partitionName(table, from)}
           partition of ${table} for values from (${bound(table, from)}) to (${bound(table, from + DAY_MS)})`,
      );
    });
  }
}

const VERIFICATION_COLUMNS = `key_verifications (time, workspace_id, api_id, key_id, identity_id,
  external_id, outcome, tags, spent_credits, request_id)`;

/** One verification as a CSV line for `copyVerificationRows`. */
export function verificationRow(e: VerificationEvent): string {
  return `${csvInteger(e.time)},${csvText(e.workspaceId)},${csvText(e.apiId)},${csvText(e.keyId)},${csvText(e.identityId)},${csvText(e.externalId)},${csvText(e.outcome)},${csvTextArray(e.tags)},${csvInteger(e.spentCredits)},${csvText(e.requestId)}\n`;
}

/**
 * Appends verification events (CSV lines of `verificationRow`) in one statement. COPY,
 * because it is the cheapest way in: on PGlite, which runs on the server's thread, a 50-row
 * COPY takes ~0.65 ms against ~0.95 ms for an INSERT of the same rows from a jsonb parameter.
 */
export async function copyVerificationRows(q: Queryable, rows: string | Uint8Array): Promise<void> {
  if (rows.length > 0) await q.copyCsv(VERIFICATION_COLUMNS, rows);
}

const RATELIMIT_COLUMNS = `ratelimit_events (time, workspace_id, namespace_id, identifier, passed,
  cost, window_limit, duration_ms, remaining, override_id, request_id)`;

/** One rate-limit decision as a CSV line for `copyRatelimitRows`. */
export function ratelimitRow(e: RatelimitEvent): string {
  return `${csvInteger(e.time)},${csvText(e.workspaceId)},${csvText(e.namespaceId)},${csvText(e.identifier)},${csvBoolean(e.passed)},${csvInteger(e.cost)},${csvInteger(e.limit)},${csvInteger(e.durationMs)},${csvInteger(e.remaining)},${csvText(e.overrideId)},${csvText(e.requestId)}\n`;
}

/** Appends rate-limit decisions (CSV lines of `ratelimitRow`) in one statement. */
export async function copyRatelimitRows(q: Queryable, rows: string | Uint8Array): Promise<void> {
  if (rows.length > 0) await q.copyCsv(RATELIMIT_COLUMNS, rows);
}

/** The events of CSV rows in the order written, back from bytes as the writer holds them. */
function rowsOf(rows: readonly Uint8Array[], columns: number): (string | null)[][] {
  const read = readCsvRows(Buffer.concat(rows).toString("utf8"));
  for (const r of read) {
    if (r.length !== columns) throw new SyntaxError(`an event row has ${r.length} fields`);
  }
  return read;
}

const text = (v: string | null | undefined): string => v ?? "";
const int = (v: string | null | undefined): number => Number(v);

/** The verifications of rows written by `verificationRow` (to write them again one by one). */
export function verificationsFromRows(rows: readonly Uint8Array[]): VerificationEvent[] {
  return rowsOf(rows, 10).map((f) => ({
    time: int(f[0]),
    workspaceId: text(f[1]),
    apiId: f[2] ?? null,
    keyId: f[3] ?? null,
    identityId: f[4] ?? null,
    externalId: f[5] ?? null,
    outcome: text(f[6]),
    tags: readTextArray(text(f[7])),
    spentCredits: int(f[8]),
    requestId: text(f[9]),
  }));
}

/** The rate-limit decisions of rows written by `ratelimitRow`. */
export function ratelimitsFromRows(rows: readonly Uint8Array[]): RatelimitEvent[] {
  return rowsOf(rows, 11).map((f) => ({
    time: int(f[0]),
    workspaceId: text(f[1]),
    namespaceId: text(f[2]),
    identifier: text(f[3]),
    passed: f[4] === "t",
    cost: int(f[5]),
    limit: int(f[6]),
    durationMs: int(f[7]),
    remaining: int(f[8]),
    overrideId: f[9] ?? null,
    requestId: text(f[10]),
  }));
}
