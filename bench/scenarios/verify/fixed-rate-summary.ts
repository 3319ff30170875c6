// The fixed-rate part's configurations, and what its rounds come to: per configuration the
// median and the range over rounds; per round the ratios the targets are about, and their
// medians.
import type { FixedRateResult } from "../../lib/load/open-loop.ts";
import { ratio, type Spread, spread } from "../../lib/stats.ts";

export const CPU_RATIO_TARGET = 0.67;
export const P99_TARGET_MS = 5;
/** When the bare server's own p99 reaches P99_TARGET_MS, Latchkey's may be this times it. */
export const P99_BARE_FACTOR = 2;
export const CREDITS_COST_TARGET = 3;

interface ConfigSpec {
  label: string;
  door: "json" | "grpc";
  /** A bare server; otherwise Latchkey on `engine`. */
  bare?: "http" | "grpc";
  engine?: "pglite" | "postgresql";
  credits?: boolean;
}

const NAMES = [
  "bareHttp",
  "jsonPglite",
  "jsonPostgresql",
  "jsonCredits",
  "bareGrpc",
  "grpcPglite",
  "grpcPostgresql",
] as const;
export type Config = (typeof NAMES)[number];

/** In the order a round runs them. */
export const CONFIGS: Record<Config, ConfigSpec> = {
  bareHttp: { label: "bare node:http", door: "json", bare: "http" },
  jsonPglite: { label: "Latchkey /v2, PGlite", door: "json", engine: "pglite" },
  jsonPostgresql: { label: "Latchkey /v2, PostgreSQL", door: "json", engine: "postgresql" },
  jsonCredits: {
    label: "Latchkey /v2, PostgreSQL, credits",
    door: "json",
    engine: "postgresql",
    credits: true,
  },
  bareGrpc: { label: "bare grpc-js", door: "grpc", bare: "grpc" },
  grpcPglite: { label: "Latchkey gRPC, PGlite", door: "grpc", engine: "pglite" },
  grpcPostgresql: { label: "Latchkey gRPC, PostgreSQL", door: "grpc", engine: "postgresql" },
};

export interface ConfigSummary {
  /** Server process, us per request. */
  cpuUs: Spread | null;
  /** Its PostgreSQL backends, us per request. */
  postgresCpuUs: Spread | null;
  p50Ms: Spread | null;
  p99Ms: Spread | null;
  maxMs: Spread | null;
  eventLoop: { p50Ms: Spread | null; p99Ms: Spread | null; maxMs: Spread | null };
  achievedRate: Spread | null;
}

export interface RatioRounds {
  rounds: (number | null)[];
  median: number | null;
}

export type RatioName = "jsonPglite" | "jsonPostgresql" | "grpcPglite" | "grpcPostgresql";

export interface FixedRateSummary {
  summary: Record<Config, ConfigSummary>;
  /** Bare CPU per request over Latchkey's (server process), by door and engine. */
  cpuRatios: Record<RatioName, RatioRounds>;
  /** (Server + backends) CPU with credits over without, PostgreSQL, /v2. */
  creditsCost: RatioRounds;
  creditsExact: boolean;
}

function summarizeConfig(rs: FixedRateResult[]): ConfigSummary {
  const of = (f: (r: FixedRateResult) => number | null | undefined) => spread(rs.map(f));
  return {
    cpuUs: of((r) => r.server.cpuUsPerRequest),
    postgresCpuUs: of((r) => r.server.postgresCpuUsPerRequest),
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    maxMs: of((r) => r.maxMs),
    eventLoop: {
      p50Ms: of((r) => r.eventLoop?.p50Ms),
      p99Ms: of((r) => r.eventLoop?.p99Ms),
      maxMs: of((r) => r.eventLoop?.maxMs),
    },
    achievedRate: of((r) => r.achievedRate),
  };
}

const rounds = (xs: (number | null)[]): RatioRounds => ({
  rounds: xs,
  median: spread(xs)?.median ?? null,
});

const totalCpu = (r: FixedRateResult) =>
  r.server.cpuUsPerRequest + (r.server.postgresCpuUsPerRequest ?? 0);

export function summarizeRounds(
  runs: Record<Config, (FixedRateResult & { credits?: { exact: boolean } })[]>,
): FixedRateSummary {
  const summary = Object.fromEntries(
    (Object.keys(CONFIGS) as Config[]).map((c) => [c, summarizeConfig(runs[c])]),
  ) as Record<Config, ConfigSummary>;
  const cpu = (bare: Config, lk: Config) =>
    rounds(
      runs[lk].map((r, i) =>
        ratio(runs[bare][i]?.server.cpuUsPerRequest, r.server.cpuUsPerRequest),
      ),
    );
  return {
    summary,
    cpuRatios: {
      jsonPglite: cpu("bareHttp", "jsonPglite"),
      jsonPostgresql: cpu("bareHttp", "jsonPostgresql"),
      grpcPglite: cpu("bareGrpc", "grpcPglite"),
      grpcPostgresql: cpu("bareGrpc", "grpcPostgresql"),
    },
    creditsCost: rounds(
      runs.jsonCredits.map((r, i) => {
        const plain = runs.jsonPostgresql[i];
        return plain ? ratio(totalCpu(r), totalCpu(plain)) : null;
      }),
    ),
    creditsExact:
      runs.jsonCredits.length > 0 && runs.jsonCredits.every((r) => r.credits?.exact === true),
  };
}

/**
 * The p99 limit of a door: P99_TARGET_MS, or P99_BARE_FACTOR times the bare server's p99
 * when that reaches P99_TARGET_MS itself (medians over rounds).
 */
export function p99Limit(bareP99Ms: number | null | undefined): {
  limitMs: number;
  relative: boolean;
} {
  return bareP99Ms != null && bareP99Ms >= P99_TARGET_MS
    ? { limitMs: P99_BARE_FACTOR * bareP99Ms, relative: true }
    : { limitMs: P99_TARGET_MS, relative: false };
}
