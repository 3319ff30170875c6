// ratelimit.limit on the /v2 JSON door, with the in-process limiter and with Redis, side by
// side with a bare node:http server in one run (h2load --h1, 50 connections). Latchkey runs on
// a fresh PostgreSQL database. Targets: in-process >= 0.5 of bare, Redis >= 0.3 of bare; below
// a target the run adds a CPU profile of that case. Results go to bench/results/.
//
//   BENCH_SECONDS=10   measured seconds per case (after a 2 s warm-up)
//   BENCH_REDIS_URL    Redis (default redis://127.0.0.1:6379)
//   BENCH_PROFILE=1    profile every case, not only those below target
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import {
  loadHttpNative,
  profileByModule,
  profileTop,
  start,
  withDatabase,
  withLatchkey,
} from "./lib.mjs";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const profileAll = process.env.BENCH_PROFILE === "1";
const results = new URL("./results/", import.meta.url).pathname;
mkdirSync(results, { recursive: true });
const rootKey = "bench_root_key_0123456789abcdef";
const TARGETS = { inProcess: 0.5, redis: 0.3 };
const body = JSON.stringify({
  namespace: "bench",
  identifier: "user_1",
  limit: 1_000_000_000,
  duration: 60_000,
});

async function bare() {
  const s = await start(process.execPath, ["bench/servers/bare-http.mjs"], {}, /\{"port":(\d+)\}/);
  try {
    return await loadHttpNative({ url: `http://127.0.0.1:${s.match[1]}/`, body, seconds });
  } finally {
    await s.stop();
  }
}

/** One Latchkey case: answers checked first, then the load, with a profile when asked. */
async function latchkey(name, env, profile) {
  const profDir = join(results, "profiles", `ratelimit-${name}`);
  rmSync(profDir, { recursive: true, force: true });
  const nodeArgs = profile ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  return withDatabase("ratelimit", (url) =>
    withLatchkey(
      url,
      { ROOT_KEY: rootKey, ...env },
      async (base) => {
        const headers = { authorization: `Bearer ${rootKey}` };
        const check = await fetch(`${base}/v2/ratelimit.limit`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body,
        });
        const answer = await check.json();
        if (check.status !== 200 || answer.data?.success !== true)
          throw new Error(`${name}: ${check.status} ${JSON.stringify(answer)}`);
        const r = await loadHttpNative({
          url: `${base}/v2/ratelimit.limit`,
          body,
          headers,
          seconds,
        });
        if (r.failed > 0 || r.ok2xx !== r.succeeded)
          throw new Error(`${name}: non-2xx answers ${JSON.stringify(r)}`);
        return { ...r, sampleAnswer: answer.data, profDir: profile ? profDir : undefined };
      },
      nodeArgs,
    ),
  );
}

function withProfile(r) {
  if (!r.profDir) return r;
  const { profDir, ...rest } = r;
  return { ...rest, profile: { byModule: profileByModule(profDir), top: profileTop(profDir) } };
}

async function main() {
  const out = { bareHttp: await bare() };
  console.log("bare node:http", out.bareHttp.rps, "req/s");
  for (const [name, env] of [
    ["inProcess", {}],
    ["redis", { REDIS_URL: redisUrl }],
  ]) {
    let r = await latchkey(name, env, profileAll);
    const ratio = r.rps / out.bareHttp.rps;
    if (ratio < TARGETS[name] && !profileAll) {
      console.log(
        `${name}: ${r.rps} req/s is ${ratio.toFixed(2)} of bare, below ${TARGETS[name]}; profiling`,
      );
      const profiled = await latchkey(name, env, true);
      r = { ...r, profDir: profiled.profDir };
    }
    out[name] = withProfile({
      ...r,
      ratioToBare: Math.round(ratio * 100) / 100,
      target: TARGETS[name],
    });
    console.log(
      `${name}: ${r.rps} req/s, ${out[name].ratioToBare} of bare (target ${TARGETS[name]})`,
    );
  }
  const result = {
    benchmark: "ratelimit.limit",
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model },
    runtime: process.version,
    settings: { seconds, connections: 50, tool: "h2load --h1", storage: "postgres" },
    ...out,
  };
  const stamp = result.date.replace(/[:.]/g, "-").slice(0, 19);
  writeFileSync(join(results, `ratelimit-${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(results, "ratelimit-latest.json"), `${JSON.stringify(result, null, 2)}\n`);
}

await main();
