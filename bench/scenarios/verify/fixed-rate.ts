// A fixed offered rate: N req/s evenly spaced, open loop, over keep-alive connections, the
// server pinned to core 0 and the generator (bench/lib/load/open-loop.ts) to core 1; latency
// from each request's scheduled send time; the server's CPU per request from /proc (every
// thread), and on PostgreSQL its backends' CPU too. The bare node:http server is measured
// first the same way, then Latchkey on PGlite and on PostgreSQL, then the machine itself (a
// spinning process on the server's core counts how often the kernel takes it away).
import { answersBetween, grpcFrame, metricsOf } from "../../lib/api.ts";
import { withDatabase } from "../../lib/database.ts";
import {
  type FixedRateResult,
  fixedRateOn,
  type OpenConfig,
  type Preemption,
  preemptionProbe,
} from "../../lib/load/open-loop.ts";
import { type Disturbance, measureQuietly } from "../../lib/quiet.ts";
import { type Engine, type LatchkeyOptions, withBare, withLatchkey } from "../../lib/server.ts";
import { ratio } from "../../lib/stats.ts";
import { BARE_KEY, hotKey, type VerifyContext } from "./common.ts";

export const FIXED_RATE_P99_TARGET_MS = 2;
const SERVER_CPU = 0;
const GENERATOR_CPU = 1;
const WARMUP_SECONDS = 5;

export type AtRate = FixedRateResult & { machine: Disturbance };
export type LatchkeyAtRate = AtRate & { engine: Engine; env: Record<string, string> };

export interface FixedRatePartResult {
  rate: number;
  seconds: number;
  pinning: string;
  bareHttp: AtRate;
  pglite: LatchkeyAtRate;
  postgresql: LatchkeyAtRate;
  /** Bare CPU per request over Latchkey's (server process only). */
  cpuRatio: { pglite: number | null; postgresql: number | null };
  /** Over the p99 target on PGlite: the same load with events dropped, and flushed every 100 ms. */
  diagnosis?: { eventsDropped: LatchkeyAtRate; flushEvery100ms: LatchkeyAtRate };
  preemption: Preemption;
}

function describe(label: string, r: FixedRateResult): void {
  const pg = r.server.postgresCpuUsPerRequest;
  console.log(
    `${label}: ${r.targetRate} req/s for ${r.seconds} s: p50 ${r.p50Ms} p90 ${r.p90Ms} p99 ${r.p99Ms}` +
      ` p99.9 ${r.p999Ms} max ${r.maxMs} ms; achieved ${r.achievedRate} req/s, lost ${r.lost};` +
      ` generator lag p99 ${r.sendLag.p99Ms} ms; server CPU ${r.server.cpuUsPerRequest} us/request` +
      `${pg === undefined ? "" : ` (+ PostgreSQL backends ${pg} us)`}, preempted ${r.server.involuntarySwitches} times`,
  );
}

/**
 * The fixed-rate load on a Latchkey pinned to the server's core: the /v2 door, or with
 * `grpc` the gRPC port (one HTTP/2 connection). Every answer must be VALID.
 */
export async function latchkeyAtRate(
  context: Pick<VerifyContext, "check" | "quiet">,
  options: LatchkeyOptions & {
    label: string;
    rate: number;
    seconds: number;
    door?: "json" | "grpc";
    /** Keep-alive connections the generator may open at most (256). */
    maxSockets?: number;
  },
  database?: string,
): Promise<LatchkeyAtRate> {
  return withLatchkey(
    { ...options, grpc: options.door === "grpc", cpu: SERVER_CPU },
    async (lk) => {
      const { key } = await hotKey(context, lk, options.label);
      const before = await metricsOf(lk.admin);
      const common = {
        mode: "open",
        rate: options.rate,
        seconds: options.seconds,
        warmupSeconds: WARMUP_SECONDS,
      } as const;
      const config: OpenConfig =
        options.door === "grpc"
          ? {
              ...common,
              url: `http://127.0.0.1:${lk.grpcPort}/latchkey.v2.KeysService/VerifyKey`,
              grpc: { body: grpcFrame(protobufKey(key)).toString("base64") },
            }
          : {
              ...common,
              url: `${lk.base}/v2/keys.verifyKey`,
              body: JSON.stringify({ key }),
              expectCode: "VALID",
              maxSockets: options.maxSockets ?? 256,
            };
      const databases = database ? [database] : [];
      // Not repeated when disturbed (each load starts a server); the disturbance is recorded.
      const r = await measureQuietly(
        context.quiet,
        () => fixedRateOn(lk.pid, config, { cpu: GENERATOR_CPU, databases }),
        0,
      );
      answersBetween(options.label, before, await metricsOf(lk.admin), context.check);
      context.check(
        r.lost === 0 && r.non2xx === 0 && r.errors === 0 && r.unexpectedCodes === 0,
        `${options.label}: ${r.lost} lost, ${r.non2xx + r.errors} failed, ${r.unexpectedCodes} not VALID`,
      );
      describe(options.label, r);
      return { ...r, engine: lk.engine, env: options.env ?? {} };
    },
  );
}

/** VerifyKeyRequest { key } by hand (field 1, length-delimited): no dist/ import needed. */
function protobufKey(key: string): Uint8Array {
  const k = Buffer.from(key);
  return Buffer.concat([Buffer.from([0x0a, k.length]), k]);
}

export async function fixedRatePart(context: VerifyContext): Promise<FixedRatePartResult> {
  const { rate, fixedRateSeconds: seconds } = context.settings;
  const bareHttp = await withBare(
    "http",
    "verify",
    async (bare) => {
      const r = await measureQuietly(
        context.quiet,
        () =>
          fixedRateOn(
            bare.pid,
            {
              mode: "open",
              url: bare.url,
              rate,
              seconds,
              warmupSeconds: WARMUP_SECONDS,
              body: JSON.stringify({ key: BARE_KEY }),
              expectCode: "VALID",
              maxSockets: 256,
            },
            { cpu: GENERATOR_CPU },
          ),
        0,
      );
      describe("bare node:http", r);
      return r;
    },
    SERVER_CPU,
  );
  const at = { rate, seconds };
  const pglite = await latchkeyAtRate(context, { ...at, label: "latchkey on PGlite" });
  const postgresql = await withDatabase("verify", (db) =>
    latchkeyAtRate(
      context,
      { ...at, label: "latchkey on PostgreSQL", databaseUrl: db.url },
      db.name,
    ),
  );
  const out: FixedRatePartResult = {
    rate,
    seconds,
    pinning: `server taskset -c ${SERVER_CPU}, generator taskset -c ${GENERATOR_CPU}`,
    bareHttp,
    pglite,
    postgresql,
    cpuRatio: {
      pglite: ratio(bareHttp.server.cpuUsPerRequest, pglite.server.cpuUsPerRequest),
      postgresql: ratio(bareHttp.server.cpuUsPerRequest, postgresql.server.cpuUsPerRequest),
    },
    preemption: { cpu: 0, seconds: 0, gapsOverMs: {}, lostMs: 0, maxGapMs: 0 },
  };
  if (
    ((pglite.p99Ms ?? 0) >= FIXED_RATE_P99_TARGET_MS && !context.quick) ||
    context.settings.profile
  ) {
    // The events are written by PGlite on the server's thread, in one batch a second.
    const short = { rate, seconds: Math.min(seconds, 20) };
    out.diagnosis = {
      eventsDropped: await latchkeyAtRate(context, {
        ...short,
        label: "PGlite, EVENT_BUFFER_SIZE=1",
        env: { EVENT_BUFFER_SIZE: "1" },
      }),
      flushEvery100ms: await latchkeyAtRate(context, {
        ...short,
        label: "PGlite, EVENT_FLUSH_INTERVAL_MS=100",
        env: { EVENT_FLUSH_INTERVAL_MS: "100" },
      }),
    };
  }
  out.preemption = await preemptionProbe(SERVER_CPU, GENERATOR_CPU, context.quick ? 2 : 10);
  const p = out.preemption;
  console.log(
    `a spinning process on core ${SERVER_CPU} (${p.seconds} s): ${p.gapsOverMs["1"]} gaps over 1 ms,` +
      ` ${p.gapsOverMs["2"]} over 2 ms, longest ${p.maxGapMs} ms`,
  );
  return out;
}
