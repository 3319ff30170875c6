import { Button, Card, Flex, Grid, Heading, SegmentedControl, Table, Text } from "@radix-ui/themes";
import { useMemo, useState } from "react";
import { CreditUsageGranularity } from "../../../../gen/latchkey/v2/analytics_pb.js";
import { ChartView, type Series } from "../components/Chart.tsx";
import { ErrorNote, Field, useLoad } from "../components/common.tsx";
import type { PageProps } from "../router.tsx";

/** The ranges offered: how far back, from which rollup, in buckets of what width. */
const RANGES = {
  "1h": { ms: 3_600_000, table: "key_verifications_per_minute_v1", stepMs: 60_000 },
  "24h": { ms: 86_400_000, table: "key_verifications_per_hour_v1", stepMs: 3_600_000 },
  "7d": { ms: 7 * 86_400_000, table: "key_verifications_per_hour_v1", stepMs: 3_600_000 },
  "30d": { ms: 30 * 86_400_000, table: "key_verifications_per_day_v1", stepMs: 86_400_000 },
} as const;
type Range = keyof typeof RANGES;

const OUTCOMES: Record<string, string> = {
  VALID: "#2f9e44",
  RATE_LIMITED: "#f08c00",
  USAGE_EXCEEDED: "#e8590c",
  DISABLED: "#868e96",
  EXPIRED: "#495057",
  INSUFFICIENT_PERMISSIONS: "#7048e8",
  NOT_FOUND: "#c92a2a",
  FORBIDDEN: "#a61e4d",
};

interface Row {
  [column: string]: unknown;
}

const bucketLabel = (ms: number, stepMs: number) =>
  stepMs >= 86_400_000
    ? new Date(ms).toLocaleDateString()
    : new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

/**
 * Verifications over time by outcome, the most used keys and the credits spent, from the
 * rollups `analytics.getVerifications` exposes; and one key's credit statement from
 * `analytics.getCreditUsage`. Every range ends now.
 */
export function AnalyticsPage({ lk }: PageProps) {
  const [range, setRange] = useState<Range>("24h");
  const [refreshed, setRefreshed] = useState(0);
  const r = RANGES[range];
  // biome-ignore lint/correctness/useExhaustiveDependencies: a refresh moves the range on
  const start = useMemo(
    () => Math.floor((Date.now() - r.ms) / r.stepMs) * r.stepMs,
    [r, refreshed],
  );
  const since = `to_timestamp(${start / 1000})`;
  const query = (sql: string) =>
    lk.analytics.getVerifications({ query: sql }).then((a) => a.data as Row[]);
  const over = useLoad(
    () =>
      query(
        `select time, outcome, sum(count) as n, sum(spent_credits) as credits from ${r.table} where time >= ${since} group by 1, 2 order by 1`,
      ),
    "read analytics",
    [range, start, refreshed],
  );
  const top = useLoad(
    () =>
      query(
        `select key_id, sum(count) as n from ${r.table} where time >= ${since} and key_id is not null group by 1 order by 2 desc limit 10`,
      ),
    "read analytics",
    [range, start, refreshed],
  );
  const chart = useMemo(
    () => timeSeries(over.data ?? [], start, r.stepMs),
    [over.data, start, r.stepMs],
  );
  return (
    <>
      <Flex justify="between" align="center" wrap="wrap" gap="3" mb="4">
        <Heading as="h1">Analytics</Heading>
        <Flex gap="2" align="center">
          <SegmentedControl.Root
            value={range}
            onValueChange={(v) => setRange(v as Range)}
            aria-label="Range"
          >
            {Object.keys(RANGES).map((k) => (
              <SegmentedControl.Item key={k} value={k}>
                {k}
              </SegmentedControl.Item>
            ))}
          </SegmentedControl.Root>
          <Button variant="soft" onClick={() => setRefreshed((n) => n + 1)}>
            Refresh
          </Button>
        </Flex>
      </Flex>
      <ErrorNote message={over.error ?? top.error} />
      <Grid columns={{ initial: "1", lg: "2" }} gap="4">
        <OverTime chart={chart} range={range} />
        <TopKeys rows={top.data ?? []} range={range} />
        <CreditStatement lk={lk} start={start} rangeMs={r.ms} />
      </Grid>
    </>
  );
}

/** Verifications by outcome and credits spent, per bucket of the range. */
function OverTime({ chart, range }: { chart: ReturnType<typeof timeSeries>; range: Range }) {
  return (
    <>
      <Card>
        <Heading as="h2" size="3" mb="2">
          Verifications by outcome
        </Heading>
        <ChartView
          type="bar"
          stacked
          labels={chart.labels}
          series={chart.outcomes}
          summary={`Verifications over the last ${range}: ${chart.total} in all, ${chart.valid} valid.`}
        />
        <Text size="2" color="gray" data-testid="verification-total">
          {chart.total} verifications, {chart.valid} valid
        </Text>
      </Card>
      <Card>
        <Heading as="h2" size="3" mb="2">
          Credits spent
        </Heading>
        <ChartView
          type="line"
          labels={chart.labels}
          series={[{ label: "credits", data: chart.credits, color: "#4263eb" }]}
          summary={`Credits spent over the last ${range}: ${chart.credits.reduce((a, b) => a + b, 0)}.`}
        />
      </Card>
    </>
  );
}

/** The ten most verified keys of the range, as a chart and as a table. */
function TopKeys({ rows: top, range }: { rows: Row[]; range: Range }) {
  return (
    <Card>
      <Heading as="h2" size="3" mb="2">
        Top keys
      </Heading>
      <ChartView
        type="bar"
        horizontal
        labels={top.map((t) => String(t.key_id))}
        series={[
          {
            label: "verifications",
            data: top.map((t) => Number(t.n)),
            color: "#4263eb",
          },
        ]}
        summary={`The ${top.length} most verified keys over the last ${range}.`}
      />
      <Table.Root size="1" mt="2">
        <caption className="sr-only">Top keys</caption>
        <Table.Body>
          {top.map((t) => (
            <Table.Row key={String(t.key_id)}>
              <Table.RowHeaderCell>
                <code>{String(t.key_id)}</code>
              </Table.RowHeaderCell>
              <Table.Cell justify="end">{Number(t.n)}</Table.Cell>
            </Table.Row>
          ))}
        </Table.Body>
      </Table.Root>
    </Card>
  );
}

/** Buckets from `start` to now, each outcome's counts and the credits, zero where none. */
function timeSeries(rows: Row[], start: number, stepMs: number) {
  const buckets: number[] = [];
  for (let t = start; t <= Date.now(); t += stepMs) buckets.push(t);
  const index = new Map(buckets.map((t, i) => [t, i]));
  const byOutcome = new Map<string, number[]>();
  const credits = buckets.map(() => 0);
  let total = 0;
  for (const row of rows) {
    const i = index.get(new Date(String(row.time)).getTime());
    if (i === undefined) continue;
    const outcome = String(row.outcome);
    const series = byOutcome.get(outcome) ?? buckets.map(() => 0);
    series[i] = (series[i] ?? 0) + Number(row.n);
    byOutcome.set(outcome, series);
    credits[i] = (credits[i] ?? 0) + Number(row.credits ?? 0);
    total += Number(row.n);
  }
  const outcomes: Series[] = [...byOutcome].map(([label, data]) => ({
    label,
    data,
    color: OUTCOMES[label] ?? "#adb5bd",
  }));
  const valid = (byOutcome.get("VALID") ?? []).reduce((a, b) => a + b, 0);
  return { labels: buckets.map((t) => bucketLabel(t, stepMs)), outcomes, credits, total, valid };
}

/** One key's credit statement over the range (spent, refilled, changed by hand). */
function CreditStatement({
  lk,
  start,
  rangeMs,
}: {
  lk: PageProps["lk"];
  start: number;
  rangeMs: number;
}) {
  const [keyId, setKeyId] = useState("");
  const [shown, setShown] = useState("");
  const granularity =
    rangeMs > 7 * 86_400_000 ? CreditUsageGranularity.DAY : CreditUsageGranularity.HOUR;
  const usage = useLoad(
    () =>
      shown
        ? lk.analytics
            .getCreditUsage({
              keyId: shown,
              start: BigInt(start),
              end: BigInt(Date.now()),
              granularity,
            })
            .then((u) => u.data)
        : Promise.resolve([]),
    "read credit statements",
    [shown, start, granularity],
  );
  const step = granularity === CreditUsageGranularity.DAY ? 86_400_000 : 3_600_000;
  const buckets = usage.data ?? [];
  return (
    <Card>
      <Heading as="h2" size="3" mb="2">
        Credit statement of a key
      </Heading>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setShown(keyId.trim());
        }}
      >
        <Flex gap="2" align="end" mb="2">
          <Field label="Key id" value={keyId} onChange={setKeyId} placeholder="key_…" />
          <Button type="submit" variant="soft">
            Show
          </Button>
        </Flex>
      </form>
      <ErrorNote message={usage.error} />
      {shown && (
        <ChartView
          type="bar"
          labels={buckets.map((b) => bucketLabel(Number(b.time), step))}
          series={[
            { label: "spent", data: buckets.map((b) => Number(b.spent)), color: "#e8590c" },
            { label: "refilled", data: buckets.map((b) => Number(b.refilled)), color: "#2f9e44" },
            { label: "adjusted", data: buckets.map((b) => Number(b.adjusted)), color: "#4263eb" },
          ]}
          summary={`Credits of ${shown}: ${buckets.reduce((a, b) => a + Number(b.spent), 0)} spent over the range.`}
        />
      )}
    </Card>
  );
}
