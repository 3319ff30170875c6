// ratelimit.limit on the /v2 door (one namespace, one identifier, a limit that never runs
// out) with the in-process limiter and with Redis, against a bare node:http server in the same
// run: h2load --h1, 50 connections, Latchkey on a fresh PostgreSQL database per case. A case
// below its target (or every case with BENCH_PROFILE=1) is profiled under a second load.
import { authorization, post } from "../lib/api.ts";
import { withDatabase } from "../lib/database.ts";
import { allAnswered2xx, type H2loadResult, h2loadLoad } from "../lib/load/closed-loop.ts";
import { num, table, verdict } from "../lib/markdown.ts";
import { type ProfileSummary, printProfile, profileWhile } from "../lib/profile.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { withBare, withLatchkey } from "../lib/server.ts";
import { ratio } from "../lib/stats.ts";

export interface RatelimitSettings {
  seconds: number;
  warmupSeconds: number;
  redisUrl: string;
  profile: boolean;
}

interface Case extends H2loadResult {
  ofBare: number | null;
  target: number;
  profile?: ProfileSummary;
}

export interface RatelimitResult {
  bareHttp: H2loadResult;
  inProcess: Case;
  redis: Case;
}

const TARGETS = { inProcess: 0.5, redis: 0.3 };
const BODY = JSON.stringify({
  namespace: "bench",
  identifier: "user_1",
  limit: 1_000_000_000,
  duration: 60_000,
});

export default defineScenario<RatelimitSettings, RatelimitResult>({
  name: "ratelimit",
  description: "ratelimit.limit with the in-process limiter and with Redis against bare node:http",
  settings: ({ quick, args }) => {
    noArgs("ratelimit", args);
    return {
      seconds: setting("BENCH_SECONDS", 10, 2, quick),
      warmupSeconds: quick ? 1 : 2,
      redisUrl: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379",
      profile: process.env.BENCH_PROFILE === "1",
    };
  },
  async run({ settings: s, check, quick }) {
    const load = (url: string, headers?: Record<string, string>) =>
      h2loadLoad({ url, body: BODY, headers, seconds: s.seconds, warmupSeconds: s.warmupSeconds });
    const bareHttp = await withBare("http", "get-api", (bare) => load(bare.url));
    console.log(`bare node:http ${bareHttp.rps} req/s`);
    const latchkey = (name: keyof typeof TARGETS, env: Record<string, string>) =>
      withDatabase("ratelimit", (db) =>
        withLatchkey({ databaseUrl: db.url, env, inspect: true }, async (lk): Promise<Case> => {
          const first = await post(lk.base, "ratelimit.limit", BODY);
          check(
            first.status === 200 && first.body.data?.success === true,
            `${name}: ${JSON.stringify(first.body)}`,
          );
          const url = `${lk.base}/v2/ratelimit.limit`;
          const r = await load(url, authorization());
          check(allAnswered2xx(r), `${name}: ${r.failed} failed, ${r.ok2xx} 2xx of ${r.succeeded}`);
          const ofBare = ratio(r.rps, bareHttp.rps);
          console.log(`${name}: ${r.rps} req/s, ${ofBare} of bare (target ${TARGETS[name]})`);
          const out: Case = { ...r, ofBare, target: TARGETS[name] };
          if (((ofBare ?? 0) < TARGETS[name] && !quick) || s.profile) {
            out.profile = (
              await profileWhile(lk.inspector, () => load(url, authorization()))
            ).profile;
            printProfile(name, out.profile);
          }
          return out;
        }),
      );
    return {
      bareHttp,
      inProcess: await latchkey("inProcess", {}),
      redis: await latchkey("redis", { REDIS_URL: s.redisUrl }),
    };
  },
  render: (r) =>
    table(
      ["server", "req/s:", "of bare:", "target:", ""],
      [
        ["bare node:http", r.bareHttp.rps, null, null, ""],
        [
          "in-process limiter",
          r.inProcess.rps,
          num(r.inProcess.ofBare),
          `>= ${r.inProcess.target}`,
          verdict((r.inProcess.ofBare ?? 0) >= r.inProcess.target),
        ],
        [
          "Redis limiter",
          r.redis.rps,
          num(r.redis.ofBare),
          `>= ${r.redis.target}`,
          verdict((r.redis.ofBare ?? 0) >= r.redis.target),
        ],
      ],
    ),
});
