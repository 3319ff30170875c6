// What every part of the verification scenario shares: its settings and the hot key.
import { HIGH_LIMIT, type SeededKey, seedKey, verify } from "../../lib/api.ts";
import type { RunContext } from "../../lib/scenario.ts";
import { setting } from "../../lib/scenario.ts";
import type { Latchkey } from "../../lib/server.ts";

export const PARTS = ["door", "propagation", "fixed-rate", "credits", "scale", "memory"] as const;
export type Part = (typeof PARTS)[number];

export interface VerifySettings {
  parts: Part[];
  /** Closed-loop loads (door, credits): measured seconds after `warmupSeconds`. */
  seconds: number;
  warmupSeconds: number;
  /**
   * Fixed-rate part: offered req/s on the /v2 door and calls/s on the gRPC port, measured
   * seconds after `fixedRateWarmupSeconds` at the same rate, in `rounds` rounds.
   */
  rate: number;
  grpcRate: number;
  fixedRateSeconds: number;
  fixedRateWarmupSeconds: number;
  rounds: number;
  propagationRounds: number;
  /** Scale part: cache off, `scaleRate` req/s over random keys among `smallKeys`, then `scaleKeys`. */
  scaleRate: number;
  scaleSeconds: number;
  smallKeys: number;
  scaleKeys: number;
  /** Memory part: distinct keys verified with the cache bounded to `cacheMaxEntries`. */
  memoryKeys: number;
  cacheMaxEntries: number;
  /**
   * BENCH_PROFILE=1: the door part diagnoses even on target; the fixed-rate part adds one
   * Latchkey run per door under --cpu-prof.
   */
  profile: boolean;
}

export type VerifyContext = RunContext<VerifySettings>;

export function verifySettings(quick: boolean, args: string[]): VerifySettings {
  const unknown = args.filter((a) => !(PARTS as readonly string[]).includes(a));
  if (unknown.length > 0) {
    throw new Error(`verify: unknown part(s) ${unknown.join(", ")}; parts: ${PARTS.join(" ")}`);
  }
  const n = (name: string, normal: number, short: number) => setting(name, normal, short, quick);
  return {
    parts: args.length > 0 ? PARTS.filter((p) => args.includes(p)) : [...PARTS],
    seconds: n("BENCH_SECONDS", 10, 2),
    warmupSeconds: quick ? 1 : 2,
    rate: n("BENCH_RATE", 3000, 2000),
    grpcRate: n("BENCH_GRPC_RATE", 1000, 500),
    fixedRateSeconds: n("BENCH_FIXED_RATE_SECONDS", 60, 5),
    fixedRateWarmupSeconds: n("BENCH_WARMUP_SECONDS", 30, 3),
    rounds: n("BENCH_ROUNDS", 3, 1),
    propagationRounds: n("BENCH_PROPAGATION_ROUNDS", 20, 3),
    scaleRate: n("BENCH_SCALE_RATE", 1000, 500),
    scaleSeconds: n("BENCH_SCALE_SECONDS", 20, 3),
    smallKeys: n("BENCH_SMALL_KEYS", 10_000, 2_000),
    scaleKeys: n("BENCH_SCALE_KEYS", 1_000_000, 20_000),
    memoryKeys: n("BENCH_MEMORY_KEYS", 1_000_000, 20_000),
    cacheMaxEntries: n("BENCH_CACHE_MAX_ENTRIES", 100_000, 5_000),
    profile: process.env.BENCH_PROFILE === "1",
  };
}

/**
 * A key with one auto-applied rate limit that never runs out (and `credits` when given),
 * verified once (cached).
 */
export async function hotKey(
  context: Pick<VerifyContext, "check">,
  lk: Latchkey,
  what: string,
  credits?: number,
): Promise<SeededKey> {
  const seeded = await seedKey(lk.base, {
    ratelimits: HIGH_LIMIT,
    ...(credits === undefined ? {} : { credits: { remaining: credits } }),
  });
  const first = await verify(lk.base, seeded.key);
  context.check(
    first.code === "VALID" &&
      first.ratelimits?.length === 1 &&
      first.ratelimits[0].autoApply &&
      (credits === undefined || first.credits === credits - 1),
    `${what}: first verification ${JSON.stringify(first)}`,
  );
  return seeded;
}

/** A key of the bare servers' requests (any string: they check nothing). */
export const BARE_KEY = "4ZeTggi7oYuRWk9tk5e8n2";
export const VERIFY_PATH = "/latchkey.v2.KeysService/VerifyKey";
