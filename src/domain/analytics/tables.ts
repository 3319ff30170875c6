/**
 * The virtual tables an analytics query may read. Each is one workspace's view of a physical
 * table; the server defines them per query (see storage/queries/analytics.ts), so a query can
 * never name a physical table.
 */
export interface VirtualTable {
  name: string;
  /** Raw event tables (one row per event), as opposed to the rollups. */
  raw: boolean;
  /** Which column API-scoped root keys are filtered on; null: such keys see no rows. */
  apiColumn: "api_id" | null;
  columns: readonly string[];
}

const ROLLUP_COLUMNS = [
  "time",
  "api_id",
  "key_id",
  "identity_id",
  "external_id",
  "outcome",
  "tags",
  "count",
  "spent_credits",
] as const;

/** Rollup granularities, smallest first. */
export const GRANULARITIES = ["minute", "hour", "day", "month"] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Every virtual table by name. */
export const VIRTUAL_TABLES: ReadonlyMap<string, VirtualTable> = new Map(
  [
    {
      name: "key_verifications_v1",
      raw: true,
      apiColumn: "api_id",
      columns: [
        "time",
        "request_id",
        "api_id",
        "key_id",
        "identity_id",
        "external_id",
        "outcome",
        "tags",
        "spent_credits",
      ],
    } satisfies VirtualTable,
    ...GRANULARITIES.map(
      (g): VirtualTable => ({
        name: `key_verifications_per_${g}_v1`,
        raw: false,
        apiColumn: "api_id",
        columns: ROLLUP_COLUMNS,
      }),
    ),
    {
      name: "ratelimits_v1",
      raw: true,
      apiColumn: null,
      columns: [
        "time",
        "request_id",
        "namespace_id",
        "identifier",
        "passed",
        "cost",
        "limit",
        "duration",
        "remaining",
        "override_id",
      ],
    } satisfies VirtualTable,
  ].map((t) => [t.name, t]),
);
