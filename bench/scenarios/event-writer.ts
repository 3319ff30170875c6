// The event writer alone, without HTTP: record N verification events and flush them, rounds
// after warm-ups, with a ticker on the event loop measuring the waits between two turns during
// the flush (what a request arriving then waits: PGlite runs the COPY on its own thread, but
// the server's thread still encodes and hands over). For each slice size (rows per COPY,
// BENCH_SLICES) on a PGlite data directory, then the server's own slices there (100 rows) on
// a fresh PostgreSQL database (BENCH_POSTGRES=off skips it): there the flush time says whether
// the writer keeps up.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import type * as BatchWriterModule from "../../src/analytics/batch-writer.ts";
import type * as EventBufferModule from "../../src/analytics/event-buffer.ts";
import type * as MigrateModule from "../../src/storage/migrate.ts";
import type * as PgliteModule from "../../src/storage/pglite.ts";
import type * as PostgresModule from "../../src/storage/postgres.ts";
import { withDatabase } from "../lib/database.ts";
import { fromDist } from "../lib/dist.ts";
import { ms, table } from "../lib/markdown.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { median, round } from "../lib/stats.ts";

export interface EventWriterSettings {
  events: number;
  rounds: number;
  warmupRounds: number;
  slices: number[];
  postgres: boolean;
}

export interface EventWriterRun {
  engine: "pglite" | "postgresql";
  sliceSize: number;
  /** Medians over the rounds. */
  recordMs: number;
  flushMs: number;
  gapP90Ms: number;
  gapMaxMs: number;
  gapMaxWorstMs: number;
}

export interface EventWriterResult {
  runs: EventWriterRun[];
}

/** One event like the verification scenario's: one key, no identity, no tags. */
const event = (i: number) => ({
  kind: "verification" as const,
  time: Date.now(),
  workspaceId: "ws_4ZeTggi7oYuRWk9t",
  apiId: "api_4ZeTggi7oYuRWk9t",
  keyId: "key_4ZeTggi7oYuRWk9t",
  identityId: null,
  externalId: null,
  outcome: "VALID" as const,
  tags: [],
  spentCredits: 0,
  requestId: `req_${i.toString(36).padStart(16, "0")}`,
});

/** Flushes while a ticker on the check phase records every gap between two loop turns. */
async function flushWatched(flush: () => Promise<boolean>) {
  const gaps: number[] = [];
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t0 = performance.now();
  if (!(await flush())) throw new Error("flush failed");
  const flushMs = performance.now() - t0;
  running = false;
  gaps.sort((a, b) => a - b);
  return { flushMs, gapP90: gaps[Math.floor(gaps.length * 0.9)] ?? 0, gapMax: gaps.at(-1) ?? 0 };
}

async function measure(
  s: EventWriterSettings,
  sliceSize: number,
  url?: string,
): Promise<EventWriterRun> {
  const { EventBuffer } = await fromDist<typeof EventBufferModule>("src/analytics/event-buffer.js");
  const { migrate } = await fromDist<typeof MigrateModule>("src/storage/migrate.js");
  const { openPglite } = await fromDist<typeof PgliteModule>("src/storage/pglite.js");
  const { openPostgres } = await fromDist<typeof PostgresModule>("src/storage/postgres.js");
  const dir = mkdtempSync(join(tmpdir(), "latchkey-bench-events-"));
  const db = url ? openPostgres({ url }) : await openPglite({ dataDir: dir });
  try {
    await migrate(db, Date.now());
    const options = {
      maxEvents: 100_000,
      maxBytes: 256 * 2 ** 20,
      flushIntervalMs: 60_000,
      batchSize: 10_000,
      sliceSize,
    };
    const buffer = new EventBuffer(db, options, pino({ level: "silent" }));
    let n = 0;
    const rounds: { recordMs: number; flushMs: number; gapP90: number; gapMax: number }[] = [];
    for (let r = 0; r < s.rounds + s.warmupRounds; r++) {
      const t0 = performance.now();
      for (let i = 0; i < s.events; i++) buffer.record(event(n++));
      const recordMs = performance.now() - t0;
      const flush = await flushWatched(() => buffer.flush());
      if (r >= s.warmupRounds) rounds.push({ recordMs, ...flush });
    }
    const [written] = await db.query<{ n: number }>(
      "select count(*)::int as n from key_verifications",
    );
    if (written?.n !== n) throw new Error(`${written?.n} rows written of ${n}`);
    const med = (f: (x: (typeof rounds)[number]) => number) => round(median(rounds.map(f)));
    const r: EventWriterRun = {
      engine: url ? "postgresql" : "pglite",
      sliceSize,
      recordMs: med((x) => x.recordMs),
      flushMs: med((x) => x.flushMs),
      gapP90Ms: med((x) => x.gapP90),
      gapMaxMs: med((x) => x.gapMax),
      gapMaxWorstMs: round(Math.max(...rounds.map((x) => x.gapMax))),
    };
    console.log(
      `${r.engine}, ${sliceSize} rows per COPY: record ${r.recordMs} ms, flush ${r.flushMs} ms;` +
        ` loop waits during the flush p90 ${r.gapP90Ms} ms, longest ${r.gapMaxMs} ms (worst ${r.gapMaxWorstMs})`,
    );
    return r;
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export default defineScenario<EventWriterSettings, EventWriterResult>({
  name: "event-writer",
  description: "recording and flushing verification events, alone (PGlite slices, PostgreSQL)",
  settings: ({ quick, args }) => {
    noArgs("event-writer", args);
    return {
      events: setting("BENCH_EVENTS", 5_000, 5_000, quick),
      rounds: quick ? 3 : 10,
      warmupRounds: quick ? 1 : 2,
      // The server's own sizes (PGlite 1,000, PostgreSQL 100) and PGlite's earlier 100.
      slices: (process.env.BENCH_SLICES ?? (quick ? "1000" : "100,1000")).split(",").map(Number),
      postgres: process.env.BENCH_POSTGRES !== "off",
    };
  },
  async run({ settings }) {
    const runs: EventWriterRun[] = [];
    for (const size of settings.slices) runs.push(await measure(settings, size));
    if (settings.postgres) {
      const { eventRowsPerStatement } = await fromDist<typeof BatchWriterModule>(
        "src/analytics/batch-writer.js",
      );
      const rows = eventRowsPerStatement("postgres");
      runs.push(await withDatabase("events", (db) => measure(settings, rows, db.url)));
    }
    return { runs };
  },
  render: (r, s) =>
    table(
      [
        "engine",
        "rows per COPY:",
        `record ${s.events}:`,
        `flush ${s.events}:`,
        "loop waits during the flush, p90 / longest (worst round)",
      ],
      r.runs.map((x) => [
        x.engine === "pglite" ? "PGlite" : "PostgreSQL",
        x.sliceSize,
        ms(x.recordMs, 1),
        ms(x.flushMs, 1),
        `${ms(x.gapP90Ms)} / ${ms(x.gapMaxMs, 1)} (${ms(x.gapMaxWorstMs, 1)})`,
      ]),
    ),
});
