// Cost at a fixed rate: N requests a second evenly spaced, open loop, the server pinned to core
// 0 and the generator (bench/lib/load/open-loop.ts) to core 1; latency from each request's
// scheduled send time; over the measured window only (after the warm-up), the server's CPU
// per request from /proc (every thread), its PostgreSQL backends' CPU apart, and its
// event-loop delay (its /metrics, read and reset at the window's edges). Per round, each
// server freshly started: the /v2 door (bare node:http, Latchkey on PGlite, on PostgreSQL, on
// PostgreSQL with credits), then the gRPC port (bare grpc-js, Latchkey on PGlite, on
// PostgreSQL); then the machine itself (a spinning process on the server's core counts how
// often the kernel takes it away). With BENCH_PROFILE=1, one more Latchkey run per door
// (PGlite) under --cpu-prof, its profiles cut to the measured window (fixed-rate-profile.ts).
import { answersBetween, grpcFrame, metricsOf } from "../../lib/api.ts";
import { withDatabase, withSql } from "../../lib/database.ts";
import {
  type FixedRateResult,
  fixedRateOn,
  type OpenConfig,
  type Preemption,
  preemptionProbe,
} from "../../lib/load/open-loop.ts";
import { type Disturbance, measureQuietly } from "../../lib/quiet.ts";
import {
  type Engine,
  type LatchkeyOptions,
  serverNodeArgs,
  withBare,
  withLatchkey,
} from "../../lib/server.ts";
import { BARE_KEY, hotKey, VERIFY_PATH, type VerifyContext } from "./common.ts";
import { type ProfileRun, profileRuns } from "./fixed-rate-profile.ts";
import {
  CONFIGS,
  type Config,
  type FixedRateSummary,
  summarizeRounds,
} from "./fixed-rate-summary.ts";

export const SERVER_CPU = 0;
export const GENERATOR_CPU = 1;
/** Keep-alive connections of the /v2 door's load; HTTP/2 connections of the gRPC load. */
export const CONNECTIONS = { json: 50, grpc: 10 } as const;
/** The credited key's balance: far more than any run verifies. */
const START_CREDITS = 100_000_000;

export type AtRate = FixedRateResult & { machine: Disturbance };

export interface CreditsBalance {
  start: number;
  /** The first verification and the VALID answers the server counted. */
  validCounted: number;
  /** The first verification and the VALID answers the generator read. */
  validReceived: number;
  remaining: number;
  exact: boolean;
}

export type LatchkeyAtRate = AtRate & {
  engine: Engine;
  env: Record<string, string>;
  credits?: CreditsBalance;
};

export interface FixedRatePartResult extends FixedRateSummary {
  /** Marks this result's shape (older result files have none). */
  shape: 2;
  rates: { json: number; grpc: number };
  connections: typeof CONNECTIONS;
  seconds: number;
  warmupSeconds: number;
  rounds: number;
  pinning: string;
  /** Per configuration, one run per round. */
  runs: Record<Config, (AtRate | LatchkeyAtRate)[]>;
  profiles?: ProfileRun[];
  preemption: Preemption;
}

type AtRateOptions = { rate: number; seconds: number; warmupSeconds?: number };

function describe(label: string, r: FixedRateResult): void {
  const pg = r.server.postgresCpuUsPerRequest;
  const el = r.eventLoop;
  console.log(
    `${label}: ${r.targetRate}/s for ${r.seconds} s: p50 ${r.p50Ms} p99 ${r.p99Ms} max ${r.maxMs} ms;` +
      ` achieved ${r.achievedRate}/s, lost ${r.lost}; generator lag p99 ${r.sendLag.p99Ms} ms;` +
      ` server CPU ${r.server.cpuUsPerRequest} us/request` +
      `${pg === undefined ? "" : ` (+ PostgreSQL backends ${pg} us)`};` +
      ` event loop p50/p99/max ${el ? `${el.p50Ms}/${el.p99Ms}/${el.maxMs}` : "?"} ms`,
  );
}

function loadConfig(
  door: "json" | "grpc",
  url: string,
  key: string,
  at: AtRateOptions,
  maxSockets?: number,
): OpenConfig {
  const common = {
    mode: "open",
    rate: at.rate,
    seconds: at.seconds,
    warmupSeconds: at.warmupSeconds ?? 5,
  } as const;
  return door === "grpc"
    ? {
        ...common,
        url,
        grpc: {
          body: grpcFrame(protobufKey(key)).toString("base64"),
          connections: CONNECTIONS.grpc,
        },
      }
    : {
        ...common,
        url,
        body: JSON.stringify({ key }),
        expectCode: "VALID",
        maxSockets: maxSockets ?? CONNECTIONS.json,
      };
}

/**
 * The fixed-rate load on a Latchkey pinned to the server's core: the /v2 door, or with
 * `grpc` the gRPC port. Every answer must be VALID; with `credits` the key has that balance
 * and what is left after the load must be exactly the start minus the VALID answers.
 */
export async function latchkeyAtRate(
  context: Pick<VerifyContext, "check" | "quiet">,
  options: LatchkeyOptions &
    AtRateOptions & {
      label: string;
      door?: "json" | "grpc";
      /** Keep-alive connections of the /v2 load (50). */
      maxSockets?: number;
      /** A balance for the key (PostgreSQL only). */
      credits?: number;
    },
  database?: string,
): Promise<LatchkeyAtRate> {
  const door = options.door ?? "json";
  return withLatchkey({ ...options, grpc: door === "grpc", cpu: SERVER_CPU }, async (lk) => {
    const seeded = await hotKey(context, lk, options.label, options.credits);
    const url =
      door === "grpc"
        ? `http://127.0.0.1:${lk.grpcPort}${VERIFY_PATH}`
        : `${lk.base}/v2/keys.verifyKey`;
    const config = loadConfig(door, url, seeded.key, options, options.maxSockets);
    const before = await metricsOf(lk.admin);
    const watch = {
      cpu: GENERATOR_CPU,
      databases: database ? [database] : [],
      eventLoopUrl: `${lk.admin}/metrics`,
    };
    // Not repeated when disturbed (each load starts a server); the disturbance is recorded.
    const r = await measureQuietly(context.quiet, () => fixedRateOn(lk.pid, config, watch), 0);
    const answers = answersBetween(options.label, before, await metricsOf(lk.admin), context.check);
    context.check(
      r.lost === 0 && r.non2xx === 0 && r.errors === 0 && r.unexpectedCodes === 0,
      `${options.label}: ${r.lost} lost, ${r.non2xx + r.errors} failed, ${r.unexpectedCodes} not VALID`,
    );
    describe(options.label, r);
    const out: LatchkeyAtRate = { ...r, engine: lk.engine, env: options.env ?? {} };
    if (options.credits !== undefined) {
      if (!options.databaseUrl) throw new Error("credits: PostgreSQL only");
      const remaining = await withSql(options.databaseUrl, async (sql) => {
        const [row] = await sql`select remaining from keys where id = ${seeded.keyId}`;
        return Number(row?.remaining);
      });
      const validCounted = 1 + (answers.codes.VALID ?? 0);
      const validReceived = 1 + (r.codes.VALID ?? 0);
      const exact = remaining === options.credits - validCounted && validCounted === validReceived;
      context.check(
        exact,
        `${options.label}: balance ${remaining} != ${options.credits} - ${validCounted} VALID` +
          ` (the generator read ${validReceived})`,
      );
      out.credits = { start: options.credits, validCounted, validReceived, remaining, exact };
    }
    return out;
  });
}

/** The same load on a bare server pinned to the server's core (any key: it checks none). */
async function bareAtRate(
  context: VerifyContext,
  protocol: "http" | "grpc",
  label: string,
  at: AtRateOptions,
): Promise<AtRate> {
  return withBare(
    protocol,
    "verify",
    async (bare) => {
      const url = protocol === "grpc" ? `http://127.0.0.1:${bare.port}${VERIFY_PATH}` : bare.url;
      const config = loadConfig(protocol === "grpc" ? "grpc" : "json", url, BARE_KEY, at);
      const watch = { cpu: GENERATOR_CPU, eventLoopUrl: bare.eventLoopUrl };
      const r = await measureQuietly(context.quiet, () => fixedRateOn(bare.pid, config, watch), 0);
      context.check(
        r.lost === 0 && r.non2xx === 0 && r.errors === 0 && r.unexpectedCodes === 0,
        `${label}: ${r.lost} lost, ${r.non2xx + r.errors} failed, ${r.unexpectedCodes} unexpected`,
      );
      describe(label, r);
      return r;
    },
    SERVER_CPU,
  );
}

/** VerifyKeyRequest { key } by hand (field 1, length-delimited): no dist/ import needed. */
function protobufKey(key: string): Uint8Array {
  const k = Buffer.from(key);
  if (k.length > 127) throw new Error("protobufKey: keys up to 127 bytes");
  return Buffer.concat([Buffer.from([0x0a, k.length]), k]);
}

/** One run of configuration `config`, on a freshly started server. */
function measure(context: VerifyContext, config: Config, round: number): Promise<AtRate> {
  const s = context.settings;
  const c = CONFIGS[config];
  const label = `round ${round}, ${c.label}`;
  const at = {
    rate: c.door === "grpc" ? s.grpcRate : s.rate,
    seconds: s.fixedRateSeconds,
    warmupSeconds: s.fixedRateWarmupSeconds,
  };
  if (c.bare) return bareAtRate(context, c.bare, label, at);
  const options = {
    ...at,
    label,
    door: c.door,
    credits: c.credits ? START_CREDITS : undefined,
    nodeArgs: serverNodeArgs(),
  };
  if (c.engine === "pglite") return latchkeyAtRate(context, options);
  return withDatabase("verify", (db) =>
    latchkeyAtRate(context, { ...options, databaseUrl: db.url }, db.name),
  );
}

/**
 * BENCH_CONFIGS=bareGrpc,grpcPglite runs only those configurations (names as in CONFIGS): for
 * a quick look at one door while working on it; a full run takes every one.
 */
function chosenConfigs(): Config[] {
  const all = Object.keys(CONFIGS) as Config[];
  const asked = process.env.BENCH_CONFIGS?.split(",").filter((c) => c !== "");
  if (!asked || asked.length === 0) return all;
  const unknown = asked.filter((c) => !(all as string[]).includes(c));
  if (unknown.length > 0) {
    throw new Error(`BENCH_CONFIGS: unknown ${unknown.join(", ")}; known: ${all.join(", ")}`);
  }
  return all.filter((c) => asked.includes(c));
}

export async function fixedRatePart(context: VerifyContext): Promise<FixedRatePartResult> {
  const s = context.settings;
  const configs = chosenConfigs();
  const runs = Object.fromEntries(Object.keys(CONFIGS).map((c) => [c, []])) as unknown as Record<
    Config,
    AtRate[]
  >;
  for (let round = 1; round <= s.rounds; round++) {
    console.log(`-- round ${round} of ${s.rounds}`);
    for (const config of configs) runs[config].push(await measure(context, config, round));
  }
  const out: FixedRatePartResult = {
    shape: 2,
    rates: { json: s.rate, grpc: s.grpcRate },
    connections: CONNECTIONS,
    seconds: s.fixedRateSeconds,
    warmupSeconds: s.fixedRateWarmupSeconds,
    rounds: s.rounds,
    pinning: `server taskset -c ${SERVER_CPU}, generator taskset -c ${GENERATOR_CPU}`,
    runs,
    ...summarizeRounds(runs),
    preemption: { cpu: 0, seconds: 0, gapsOverMs: {}, lostMs: 0, maxGapMs: 0 },
  };
  if (s.profile) out.profiles = await profileRuns(context);
  out.preemption = await preemptionProbe(SERVER_CPU, GENERATOR_CPU, context.quick ? 2 : 10);
  const p = out.preemption;
  console.log(
    `a spinning process on core ${SERVER_CPU} (${p.seconds} s): ${p.gapsOverMs["1"]} gaps over 1 ms,` +
      ` ${p.gapsOverMs["2"]} over 2 ms, longest ${p.maxGapMs} ms`,
  );
  return out;
}
