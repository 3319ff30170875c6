// keys.verifyKey on one Latchkey with WORKERS=1 and with more workers (node:cluster), on
// PostgreSQL and Redis (what WORKERS above 1 needs): the hot key of the verify scenario (one
// auto-applied rate limit, counted in Redis), a fresh database per run.
//
//   closed loop  autocannon, `connections` keep-alive connections for `seconds`: throughput
//   fixed rate   `rate` req/s evenly spaced (open loop, bench/lib/load/open-loop.ts) for
//                `fixedRateSeconds`: latency, and the CPU per request of the whole server (the
//                primary and every worker, from /proc) and of its PostgreSQL backends
//
// Nothing is pinned: the workers are there to use every core. The load generator shares the
// machine with them, so on a machine of few cores the figures say more about the machine.
//
//   npm run bench -- workers        BENCH_WORKERS=1,2 BENCH_SECONDS=10 BENCH_RATE=2000
//                                   BENCH_FIXED_RATE_SECONDS=20 BENCH_CONNECTIONS=64
//                                   BENCH_REDIS_URL (redis://127.0.0.1:6379)
import { availableParallelism } from "node:os";
import { type Answers, answersBetween, metricsOf } from "../lib/api.ts";
import { withDatabase } from "../lib/database.ts";
import { type AutocannonResult, allAnswered2xx, autocannonLoad } from "../lib/load/closed-loop.ts";
import { type OpenResult, spawnLoad } from "../lib/load/open-loop.ts";
import { ms, num, table } from "../lib/markdown.ts";
import { postgresBackendsCpuMs, processTreeCpuMs } from "../lib/proc.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { withLatchkey } from "../lib/server.ts";
import { ratio } from "../lib/stats.ts";
import { hotKey } from "./verify/common.ts";

export interface WorkersSettings {
  /** The WORKERS values compared, in order. */
  workers: number[];
  seconds: number;
  warmupSeconds: number;
  connections: number;
  rate: number;
  fixedRateSeconds: number;
  redisUrl: string;
}

interface AtRate extends OpenResult {
  /** CPU of the primary and its workers per request handled (warm-up included), µs. */
  serverCpuUsPerRequest: number;
  /** CPU of the PostgreSQL backends serving its database per request, µs. */
  postgresCpuUsPerRequest: number;
}

interface WorkersRun {
  workers: number;
  closed: AutocannonResult;
  atRate: AtRate;
  /** What the server counted (its admin port: the sum over its workers). */
  answers: Answers;
}

export interface WorkersResult {
  cores: number;
  runs: WorkersRun[];
}

function workersList(raw: string | undefined): number[] {
  const list = (raw ?? "1,2").split(",").map(Number);
  if (list.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) {
    throw new Error(`BENCH_WORKERS=${raw}: a comma-separated list of 1 to 64`);
  }
  return list;
}

export default defineScenario<WorkersSettings, WorkersResult>({
  name: "workers",
  description:
    "keys.verifyKey with WORKERS=1 and 2 on PostgreSQL + Redis: closed-loop req/s, CPU per request at a fixed rate",
  settings: ({ quick, args }) => {
    noArgs("workers", args);
    return {
      workers: workersList(process.env.BENCH_WORKERS),
      seconds: setting("BENCH_SECONDS", 10, 2, quick),
      warmupSeconds: quick ? 1 : 2,
      connections: setting("BENCH_CONNECTIONS", 64, 16, quick),
      rate: setting("BENCH_RATE", 2000, 500, quick),
      fixedRateSeconds: setting("BENCH_FIXED_RATE_SECONDS", 20, 3, quick),
      redisUrl: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379",
    };
  },
  async run({ settings: s, check }) {
    const runs: WorkersRun[] = [];
    for (const workers of s.workers) {
      const label = `WORKERS=${workers}`;
      const env = { REDIS_URL: s.redisUrl, WORKERS: String(workers) };
      const run = await withDatabase("workers", (db) =>
        withLatchkey({ databaseUrl: db.url, env }, async (lk): Promise<WorkersRun> => {
          const { key } = await hotKey({ check }, lk, label);
          const url = `${lk.base}/v2/keys.verifyKey`;
          const body = JSON.stringify({ key });
          const before = await metricsOf(lk.admin);
          const closed = await autocannonLoad({
            url,
            body,
            connections: s.connections,
            seconds: s.seconds,
            warmupSeconds: s.warmupSeconds,
            verifyBody: (text) => text.includes('"code":"VALID"'),
          });
          check(allAnswered2xx(closed) && closed.notValid === 0, `${label}: closed loop failed`);
          const cpuBefore = processTreeCpuMs(lk.pid);
          const pgBefore = postgresBackendsCpuMs([db.name]);
          const open = await spawnLoad({
            mode: "open",
            url,
            body,
            rate: s.rate,
            seconds: s.fixedRateSeconds,
            warmupSeconds: s.warmupSeconds,
            expectCode: "VALID",
            maxSockets: 256,
          });
          const cpuMs = processTreeCpuMs(lk.pid) - cpuBefore;
          const pgMs = postgresBackendsCpuMs([db.name]) - pgBefore;
          check(
            open.lost === 0 && open.non2xx === 0 && open.errors === 0 && open.unexpectedCodes === 0,
            `${label}: at ${s.rate} req/s ${open.lost} lost, ${open.non2xx + open.errors} failed`,
          );
          const answers = answersBetween(label, before, await metricsOf(lk.admin), check);
          const perRequest = (cpu: number) =>
            Math.round((1000 * cpu) / Math.max(1, open.handledWithWarmup));
          const atRate = {
            ...open,
            serverCpuUsPerRequest: perRequest(cpuMs),
            postgresCpuUsPerRequest: perRequest(pgMs),
          };
          console.log(
            `${label}: closed loop ${closed.rps} req/s (p99 ${closed.p99Ms} ms); at ${s.rate} req/s` +
              ` p99 ${open.p99Ms} ms, server ${atRate.serverCpuUsPerRequest} us/request,` +
              ` PostgreSQL ${atRate.postgresCpuUsPerRequest} us/request`,
          );
          return { workers, closed, atRate, answers };
        }),
      );
      runs.push(run);
    }
    return { cores: availableParallelism(), runs };
  },
  render(r, s) {
    const one = r.runs.find((run) => run.workers === 1)?.closed.rps;
    return [
      `${r.cores} cores available to the server and the load generator together.`,
      "",
      table(
        [
          "WORKERS:",
          `closed loop, ${s.connections} connections, req/s:`,
          "of WORKERS=1:",
          "p50 / p99:",
          `at ${num(s.rate)} req/s, p50 / p99:`,
          "server CPU per request:",
          "PostgreSQL CPU per request:",
        ],
        r.runs.map((run) => [
          run.workers,
          run.closed.rps,
          one === undefined ? null : num(ratio(run.closed.rps, one)),
          `${ms(run.closed.p50Ms)} / ${ms(run.closed.p99Ms)}`,
          `${ms(run.atRate.p50Ms)} / ${ms(run.atRate.p99Ms)}`,
          `${num(run.atRate.serverCpuUsPerRequest, 0)} µs`,
          `${num(run.atRate.postgresCpuUsPerRequest, 0)} µs`,
        ]),
      ),
    ].join("\n");
  },
});
