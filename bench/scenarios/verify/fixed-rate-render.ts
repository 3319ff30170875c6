// The fixed-rate part's share of the verification section of docs/benchmarks.md.
import { EVENT_LOOP_RESOLUTION_MS } from "../../lib/eventloop.ts";
import { ms, num, table } from "../../lib/markdown.ts";
import type { ProfileSummary } from "../../lib/profile.ts";
import type { Spread } from "../../lib/stats.ts";
import type { FixedRatePartResult } from "./fixed-rate.ts";
import type { ProfileRun } from "./fixed-rate-profile.ts";
import { CONFIGS, type Config, type RatioRounds } from "./fixed-rate-summary.ts";

/** "median (min–max)" when the rounds differ, else the value. */
function cell(x: Spread | null, format: (v: number) => string): string {
  if (!x) return "–";
  if (x.min === x.max) return format(x.median);
  return `${format(x.median)} (${format(x.min)}–${format(x.max)})`;
}

const us = (v: number) => `${num(v, 0)} us`;
const msCell = (v: number) => ms(v, 3);

function ratioText(r: RatioRounds): string {
  const each = r.rounds.length > 1 ? ` (${r.rounds.map((x) => num(x)).join(", ")})` : "";
  return `${num(r.median)}${each}`;
}

function profileTables(title: string, p: ProfileSummary): string[] {
  return [
    `${title}: ${num(p.busyMs, 0)} ms busy of ${num(p.sampledMs, 0)} ms sampled in the window; self time in percent of the busy time:`,
    table(
      ["function", "self:"],
      p.top.map((t) => [`\`${t.fn}\``, `${num(t.selfPercent, 1)}%`]),
    ),
    table(
      ["package, dist/src folder or node internals", "self:"],
      p.byModule.map((m) => [m.group, `${num(m.selfPercent, 1)}%`]),
    ),
  ];
}

function profileSection(p: ProfileRun): string[] {
  const door = p.door === "grpc" ? "gRPC port" : "/v2 door";
  const out = [
    `CPU profile, Latchkey's ${door} on PGlite at ${num(p.rate, 0)}/s (one more run under \`--cpu-prof\`: ${us(p.cpuUsPerRequest)} of server CPU per request, p99 ${ms(p.p99Ms, 2)}, the profiler included), cut to the ${num(p.windowMs / 1000, 1)} s measured window.`,
  ];
  if (p.main) out.push(...profileTables("Main thread", p.main.summary));
  if (p.busiestWorker)
    out.push(
      ...profileTables(
        `The busiest of its ${p.workers} worker thread(s) (PGlite runs in one)`,
        p.busiestWorker.summary,
      ),
    );
  return out;
}

export function renderFixedRate(f: FixedRatePartResult): string[] {
  if ((f as { shape?: number }).shape !== 2) {
    return [
      "The fixed-rate result of this run has an older shape (before rounds, the gRPC door and credits at a fixed rate); `npm run bench -- verify fixed-rate` replaces it.",
    ];
  }
  const rows = (Object.keys(CONFIGS) as Config[]).map((c) => {
    const x = f.summary[c];
    const el = x.eventLoop;
    return [
      CONFIGS[c].label,
      `${num(CONFIGS[c].door === "grpc" ? f.rates.grpc : f.rates.json, 0)}/s`,
      cell(x.cpuUs, us),
      cell(x.postgresCpuUs, us),
      cell(x.p50Ms, msCell),
      cell(x.p99Ms, msCell),
      cell(x.maxMs, msCell),
      `${cell(el.p50Ms, msCell)} / ${cell(el.p99Ms, msCell)} / ${cell(el.maxMs, msCell)}`,
      cell(x.achievedRate, (v) => num(v, 0)),
    ];
  });
  const r = f.cpuRatios;
  const p = f.preemption;
  const credits = f.runs.jsonCredits
    .map((run, i) => {
      const c = "credits" in run ? run.credits : undefined;
      return c
        ? `round ${i + 1}: ${num(c.remaining, 0)} = ${num(c.start, 0)} − ${num(c.validCounted, 0)} VALID${c.exact ? "" : " **not exact**"}`
        : `round ${i + 1}: unread`;
    })
    .join("; ");
  const out = [
    `Fixed rate, ${f.rounds} round(s), each server freshly started for each run; ${f.seconds} s measured after a ${f.warmupSeconds} s warm-up at the same rate; the /v2 door at ${num(f.rates.json, 0)} req/s over ${f.connections.json} keep-alive connections, the gRPC port at ${num(f.rates.grpc, 0)} calls/s over ${f.connections.grpc} HTTP/2 connections; open loop, latency from the scheduled send time (${f.pinning}). A cached key with one auto-applied rate limit, events on. Per configuration the median over rounds, with the range in brackets. CPU per request over the measured window from \`/proc\`: the server process's every thread, PostgreSQL's backends shown apart. Event-loop delay: the server's \`monitorEventLoopDelay\` over the window (${EVENT_LOOP_RESOLUTION_MS} ms resolution: an idle loop reads about ${EVENT_LOOP_RESOLUTION_MS} ms).`,
    table(
      [
        "server",
        "rate:",
        "server CPU / request:",
        "PostgreSQL CPU / request:",
        "p50:",
        "p99:",
        "max:",
        "event loop p50 / p99 / max:",
        "achieved:",
      ],
      rows,
    ),
    `Bare CPU per request over Latchkey's (server process; median of the rounds' ratios, each round's in brackets): /v2 door ${ratioText(r.jsonPglite)} on PGlite, ${ratioText(r.jsonPostgresql)} on PostgreSQL; gRPC port ${ratioText(r.grpcPglite)} on PGlite, ${ratioText(r.grpcPostgresql)} on PostgreSQL. Credits on PostgreSQL, CPU per request (server + backends) with credits over without in the same round: ${ratioText(f.creditsCost)}; balance ${credits}. A process spinning on the server's core lost it ${num(p.gapsOverMs["1"] ?? null, 0)} times for over 1 ms and ${num(p.gapsOverMs["2"] ?? null, 0)} times for over 2 ms in ${p.seconds} s (longest ${ms(p.maxGapMs, 1)}).`,
  ];
  for (const profile of f.profiles ?? []) out.push(...profileSection(profile));
  return out;
}
