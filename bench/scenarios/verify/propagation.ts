// A change made through one process seen by another: two processes on one PostgreSQL database
// (CACHE_TTL_MS=30000), B has a key cached, A disables it; the time from A's answer until B
// answers DISABLED (the invalidation bus, not the cache's expiry).
import { call, HIGH_LIMIT, seedKey, verify } from "../../lib/api.ts";
import { withDatabase } from "../../lib/database.ts";
import { withLatchkey } from "../../lib/server.ts";
import { type LatencySummary, round, sleep, summarize } from "../../lib/stats.ts";
import type { VerifyContext } from "./common.ts";

export const PROPAGATION_TARGET_MS = 1000;

export interface PropagationResult {
  rounds: number;
  /** From A's updateKey answer until B's first DISABLED answer. */
  afterUpdate: LatencySummary;
  /** The same from when A's updateKey was sent. */
  fromRequest: LatencySummary;
  updateKeyP50Ms: number | null;
  pollRoundTripP50Ms: number | null;
  /** Rounds in which B's first poll already answered DISABLED. */
  firstPollAlreadyDisabled: number;
}

async function oneRound(context: VerifyContext, a: string, b: string, apiId: string) {
  const { keyId, key } = await seedKey(a, { ratelimits: HIGH_LIMIT }, apiId);
  // B caches the key: a miss loads it, the second answer comes from the cache.
  for (let j = 0; j < 2; j++) {
    const v = await verify(b, key);
    context.check(v.code === "VALID", `propagation: B's answer before the change: ${v.code}`);
  }
  await sleep(20 + Math.random() * 30);
  const sent = performance.now();
  await call(a, "keys.updateKey", { keyId, enabled: false });
  const answered = performance.now();
  const polls: number[] = [];
  let seen: number | null = null;
  while (performance.now() - answered < 35_000) {
    const t = performance.now();
    const v = await verify(b, key);
    polls.push(performance.now() - t);
    if (v.code === "DISABLED") {
      seen = performance.now();
      break;
    }
    context.check(v.code === "VALID", `propagation: B answered ${v.code}`);
  }
  context.check(seen !== null, "propagation: B never answered DISABLED");
  return {
    afterUpdateMs: (seen ?? Number.NaN) - answered,
    fromRequestMs: (seen ?? Number.NaN) - sent,
    updateMs: answered - sent,
    polls,
  };
}

export async function propagationPart(context: VerifyContext): Promise<PropagationResult> {
  return withDatabase("verify", async (db) => {
    const options = { databaseUrl: db.url, env: { CACHE_TTL_MS: "30000" } };
    return withLatchkey(options, (a) =>
      withLatchkey(options, async (b) => {
        const { apiId } = await seedKey(a.base);
        const rounds = [];
        for (let i = 0; i < context.settings.propagationRounds; i++) {
          rounds.push(await oneRound(context, a.base, b.base, apiId));
        }
        const out = {
          rounds: rounds.length,
          afterUpdate: summarize(rounds.map((r) => r.afterUpdateMs)),
          fromRequest: summarize(rounds.map((r) => r.fromRequestMs)),
          updateKeyP50Ms: summarize(rounds.map((r) => r.updateMs)).p50Ms,
          pollRoundTripP50Ms: summarize(rounds.flatMap((r) => r.polls)).p50Ms,
          firstPollAlreadyDisabled: rounds.filter((r) => r.polls.length === 1).length,
        };
        console.log(
          `A's updateKey answer -> B answers DISABLED: p50 ${out.afterUpdate.p50Ms} ms,` +
            ` p99 ${out.afterUpdate.p99Ms} ms over ${out.rounds} rounds` +
            ` (${out.firstPollAlreadyDisabled} DISABLED at the first poll; one poll` +
            ` ~${round(out.pollRoundTripP50Ms ?? Number.NaN, 3)} ms)`,
        );
        return out;
      }),
    );
  });
}
