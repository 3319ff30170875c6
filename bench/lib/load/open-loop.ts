// The load generator for fixed offered rates, run as a process of its own (so that it can be
// pinned to a core with taskset and its work stays out of the measuring process). Two modes:
//
//   open    requests leave on a fixed schedule (`rate` per second, evenly spaced) whatever the
//           answers, over keep-alive connections; each latency is measured from the request's
//           SCHEDULED send time, so a stall of the server (or of this generator) shows in the
//           latencies instead of silently lowering the rate (coordinated omission). With
//           `watch`, it also reads what the server spent over the measured window (see Watch).
//   closed  `concurrency` workers send one request after another, `total` requests: used to
//           walk many distinct keys.
//
//   node bench/lib/load/open-loop.ts '<json config>'   prints one JSON line with the result
//   node bench/lib/load/open-loop.ts spin <seconds>     the spinning side of preemptionProbe
import { fileURLToPath } from "node:url";
import { type EventLoopDelay, scrapeEventLoopDelay } from "../eventloop.ts";
import { postgresBackendsCpuMs, processUsage } from "../proc.ts";
import { runToEnd } from "../process.ts";
import { type LatencySummary, round, summarize } from "../stats.ts";
import type { LoadClient, Target } from "./client.ts";
import { grpcClient } from "./grpc-client.ts";
import { http1Client } from "./http1-client.ts";

/**
 * The server a fixed-rate load measures, read by the generator itself at the edges of the
 * measured window (it alone knows when the warm-up ends): the CPU of every thread of `pid` and
 * of the PostgreSQL backends of `databases` from /proc, and the event-loop delay from
 * `eventLoopUrl` (a /metrics that resets its histogram when read). The first reading is taken
 * 100 ms of schedule before the window, so that its cost delays warm-up requests only; CPU is
 * then divided by the answers received between the two readings.
 */
export interface Watch {
  pid: number;
  databases?: string[];
  eventLoopUrl?: string;
}

export interface OpenConfig extends Target {
  mode: "open";
  rate: number;
  seconds: number;
  warmupSeconds?: number;
  /** How long to wait for the last answers. */
  drainMs?: number;
  watch?: Watch;
}

export interface ClosedConfig extends Target {
  mode: "closed";
  concurrency?: number;
  total: number;
}

export interface OpenResult extends Omit<LatencySummary, "count"> {
  mode: "open";
  targetRate: number;
  seconds: number;
  warmupSeconds: number;
  sent: number;
  answered: number;
  /** Answered or failed, warm-up included: what the server handled while it was measured. */
  handledWithWarmup: number;
  lost: number;
  achievedRate: number;
  /** How late the generator sent requests against their schedule (its own health). */
  sendLag: LatencySummary;
  maxInFlight: number;
  non2xx: number;
  errors: number;
  unexpectedCodes: number;
  codes: Record<string, number>;
  /** The measured window in CLOCK_MONOTONIC us (the clock of V8's CPU profiles). */
  window: { startUs: number; endUs: number };
  /** With `watch`: what the server spent over the window. */
  server?: ServerCost;
  /** With `watch.eventLoopUrl`: the server's event-loop delay over the window (null: unread). */
  eventLoop?: EventLoopDelay | null;
}

export interface ServerCost {
  /** CPU of every thread of the server process per request answered in the window. */
  cpuUsPerRequest: number;
  /** How often the kernel took a core away from one of its threads in the window. */
  involuntarySwitches: number;
  /** CPU of its PostgreSQL backends per request (with `watch.databases`). */
  postgresCpuUsPerRequest?: number;
}

export interface ClosedResult {
  mode: "closed";
  concurrency: number;
  requests: number;
  seconds: number;
  rps: number;
  non2xx: number;
  errors: number;
  unexpectedCodes: number;
  codes: Record<string, number>;
}

const clientFor = (target: Target): LoadClient =>
  target.grpc ? grpcClient(target) : http1Client(target);

/** CLOCK_MONOTONIC in us of a performance.now() of this process. */
const monoAt = (() => {
  const mono = Number(process.hrtime.bigint() / 1000n);
  const perf = performance.now();
  return (perfMs: number) => Math.round(mono + (perfMs - perf) * 1000);
})();

/** Reads the watched server now; `finish(answered)` reads it again and gives the difference. */
function watchFrom(watch: Watch, answered: number) {
  const databases = watch.databases ?? [];
  const before = processUsage(watch.pid);
  const pgBefore = postgresBackendsCpuMs(databases);
  const reset = watch.eventLoopUrl ? scrapeEventLoopDelay(watch.eventLoopUrl) : undefined;
  return async (answeredNow: number) => {
    const after = processUsage(watch.pid);
    const pgAfter = postgresBackendsCpuMs(databases);
    const requests = Math.max(1, answeredNow - answered);
    const perRequest = (ms: number) => Math.round((1000 * ms) / requests);
    const server: ServerCost = {
      cpuUsPerRequest: perRequest(after.cpuMs - before.cpuMs),
      involuntarySwitches: after.preempted - before.preempted,
      ...(databases.length > 0 ? { postgresCpuUsPerRequest: perRequest(pgAfter - pgBefore) } : {}),
    };
    if (!watch.eventLoopUrl) return { server };
    await reset;
    return { server, eventLoop: await scrapeEventLoopDelay(watch.eventLoopUrl) };
  };
}

/** Open loop: `rate` req/s for `warmupSeconds` (not recorded), then `seconds`. */
export function runOpen(config: OpenConfig): Promise<OpenResult> {
  const { rate, seconds } = config;
  const warmupSeconds = config.warmupSeconds ?? 3;
  const c = clientFor(config);
  const interval = 1000 / rate;
  const warm = Math.round(rate * warmupSeconds);
  const total = warm + Math.round(rate * seconds);
  const latencies = new Float64Array(total - warm);
  const lag = new Float64Array(total - warm);
  const keys = config.keys;
  // A random key of the range, else the request's own number (for `bodyEach`).
  const pick = () => (keys ? keys.from + Math.floor(Math.random() * (keys.count ?? 1)) : sent);
  let recorded = 0;
  let answered = 0;
  let sent = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let measureStart = 0;
  let measureEnd = 0;
  const watchAt = warm - Math.min(warm, Math.round(rate * 0.1));
  let watched: ReturnType<typeof watchFrom> | undefined;
  let finished = false;
  // A first read of the event-loop delay before the schedule starts: it loads fetch, which
  // would otherwise stall the generator at the reading before the window.
  const url = config.watch?.eventLoopUrl;
  const ready = url ? scrapeEventLoopDelay(url) : Promise.resolve(null);
  return new Promise((resolve) => {
    let guard: NodeJS.Timeout | undefined;
    let t0 = 0;
    const finish = async () => {
      if (finished) return;
      finished = true;
      clearTimeout(guard);
      const cost = await watched?.(answered);
      c.destroy();
      const measured = total - warm;
      const { count: _, ...percentiles } = summarize(latencies.subarray(0, recorded));
      resolve({
        mode: "open",
        targetRate: rate,
        seconds,
        warmupSeconds,
        sent: measured,
        answered: recorded,
        handledWithWarmup: answered,
        lost: measured - recorded,
        achievedRate: Math.round(recorded / ((measureEnd - measureStart) / 1000)),
        ...percentiles,
        sendLag: summarize(lag.subarray(0, Math.max(0, Math.min(sent - warm, lag.length)))),
        maxInFlight,
        non2xx: c.counts.non2xx,
        errors: c.counts.errors,
        unexpectedCodes: c.counts.unexpected,
        codes: c.codes,
        window: { startUs: monoAt(measureStart), endUs: monoAt(measureEnd) },
        ...cost,
      });
    };
    const onDone = (i: number, scheduled: number) => (ok: boolean) => {
      const now = performance.now();
      inFlight--;
      answered++;
      if (i >= warm && ok) {
        latencies[recorded++] = now - scheduled;
        measureEnd = now;
      }
      if (answered === total) void finish();
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && t0 + sent * interval <= now) {
        const scheduled = t0 + sent * interval;
        if (sent === watchAt && config.watch) watched = watchFrom(config.watch, answered);
        if (sent === warm) measureStart = scheduled;
        if (sent >= warm) lag[sent - warm] = now - scheduled;
        inFlight++;
        if (inFlight > maxInFlight) maxInFlight = inFlight;
        c.send(pick(), onDone(sent, scheduled));
        sent++;
      }
      if (sent < total) setImmediate(tick);
      else guard = setTimeout(() => void finish(), config.drainMs ?? 30_000);
    };
    void ready.then(() => {
      t0 = performance.now() + 20;
      setTimeout(tick, 20);
    });
  });
}

/** Closed loop: `concurrency` workers over keys [keys.from, keys.from + total). */
export async function runClosed(config: ClosedConfig): Promise<ClosedResult> {
  const concurrency = config.concurrency ?? 64;
  const c = clientFor(config);
  const from = config.keys?.from ?? 0;
  let next = 0;
  const t0 = performance.now();
  const worker = () =>
    new Promise<void>((resolve) => {
      const step = () => {
        if (next >= config.total) return resolve();
        c.send(from + next++, step);
      };
      step();
    });
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - t0;
  c.destroy();
  return {
    mode: "closed",
    concurrency,
    requests: config.total,
    seconds: round(ms / 1000, 1),
    rps: Math.round(config.total / (ms / 1000)),
    non2xx: c.counts.non2xx,
    errors: c.counts.errors,
    unexpectedCodes: c.counts.unexpected,
    codes: c.codes,
  };
}

const self = fileURLToPath(import.meta.url);

/** Runs the generator as a process of its own (pinned to `cpu` when given). */
export async function spawnLoad(config: OpenConfig, cpu?: number): Promise<OpenResult>;
export async function spawnLoad(config: ClosedConfig, cpu?: number): Promise<ClosedResult>;
export async function spawnLoad(config: OpenConfig | ClosedConfig, cpu?: number) {
  const out = await runToEnd([process.execPath, self, JSON.stringify(config)], { cpu });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "null");
}

export type FixedRateResult = OpenResult & {
  server: ServerCost;
  eventLoop: EventLoopDelay | null;
};

/**
 * An open-loop load against the server process `pid`, adding what the server spent per
 * request over the measured window, read from /proc: at a fixed rate this compares two
 * servers without the generator's share of the machine in the figure. With `databases`, the
 * CPU of the PostgreSQL backends serving them is added apart; with `eventLoopUrl`, the
 * server's event-loop delay over the window.
 */
export async function fixedRateOn(
  pid: number,
  config: OpenConfig,
  options: { cpu?: number; databases?: string[]; eventLoopUrl?: string } = {},
): Promise<FixedRateResult> {
  const watch: Watch = { pid, databases: options.databases, eventLoopUrl: options.eventLoopUrl };
  const r = await spawnLoad({ ...config, watch }, options.cpu);
  if (!r.server) throw new Error("the generator did not read the server's CPU");
  return { ...r, server: r.server, eventLoop: r.eventLoop ?? null };
}

export interface Preemption {
  cpu: number;
  seconds: number;
  gapsOverMs: Record<string, number>;
  lostMs: number;
  maxGapMs: number;
}

/**
 * What this machine itself does to a busy core: a process spinning on `cpu` (while another
 * spins on `other`, as the generator does) counts the gaps between two reads of the clock,
 * which are the times the kernel ran something else on that core.
 */
export async function preemptionProbe(cpu = 0, other = 1, seconds = 10): Promise<Preemption> {
  const run = (core: number) =>
    runToEnd([process.execPath, self, "spin", String(seconds)], { cpu: core });
  const [probe] = await Promise.all([run(cpu), run(other)]);
  return { cpu, ...JSON.parse(probe ?? "{}") };
}

function spin(seconds: number): Omit<Preemption, "cpu"> {
  const over: Record<string, number> = { "0.5": 0, "1": 0, "2": 0, "5": 0 };
  let lostMs = 0;
  let maxMs = 0;
  const end = performance.now() + seconds * 1000;
  for (let last = performance.now(); last < end; ) {
    const now = performance.now();
    const gap = now - last;
    if (gap > 0.5) {
      lostMs += gap;
      maxMs = Math.max(maxMs, gap);
      for (const k of Object.keys(over)) if (gap > Number(k)) over[k] = (over[k] ?? 0) + 1;
    }
    last = now;
  }
  return { seconds, gapsOverMs: over, lostMs: round(lostMs, 1), maxGapMs: round(maxMs, 3) };
}

if (import.meta.main) {
  if (process.argv[2] === "spin") {
    console.log(JSON.stringify(spin(Number(process.argv[3]))));
  } else {
    const config = JSON.parse(process.argv[2] ?? "{}") as OpenConfig | ClosedConfig;
    const r = await (config.mode === "closed" ? runClosed(config) : runOpen(config));
    console.log(JSON.stringify(r));
  }
}
