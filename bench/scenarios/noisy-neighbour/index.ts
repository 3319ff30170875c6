// How one tenant's heaviest requests touch another tenant (PostgreSQL). A quiet tenant calls
// createKey then verifyKey, one after the other (p50/p99 of each), alone, then while a noisy
// tenant (a second workspace, noisy-tenant.ts in a worker thread) loops over migrateKeys of 100
// keys with every list at its maximum, createKey likewise, and analytics queries that run to
// the timeout or build far more than the result cap. Before that, the server's peak resident
// memory across the hostile analytics queries, two at a time.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { call, post } from "../../lib/api.ts";
import { withDatabase } from "../../lib/database.ts";
import { projectRoot } from "../../lib/dist.ts";
import { ms, num, table } from "../../lib/markdown.ts";
import { memoryOf } from "../../lib/proc.ts";
import { defineScenario, noArgs, setting } from "../../lib/scenario.ts";
import { withLatchkey } from "../../lib/server.ts";
import { type LatencySummary, round, summarize } from "../../lib/stats.ts";
import { HOSTILE_QUERIES, type NoisyTenantData } from "./noisy-tenant.ts";

export interface NoisySettings {
  seconds: number;
  noisyConnections: number;
  noisyKinds: string[];
  /** More settings of the server, as JSON in LATCHKEY_ENV. */
  serverEnv: Record<string, string>;
}

interface Quiet {
  createKey: LatencySummary;
  verifyKey: LatencySummary;
  failures: number;
}

export interface NoisyResult {
  memory: { query: string; statuses: number[]; codes: string[]; peakGrowthMb: number }[];
  alone: Quiet;
  underLoad: Quiet;
  noisyAnswers: Record<string, number>;
}

/** A second workspace with an all-powerful root key, made with the CLI as an operator would. */
function noisyTenantKey(url: string): string {
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, [join(projectRoot, "dist/src/cli/main.js"), ...args], {
      env: { ...process.env, DATABASE_URL: url },
      encoding: "utf8",
    }).trim();
  const workspace = cli("workspace", "create", "--name", "noisy");
  return cli("root-key", "create", "--workspace", workspace, "--all");
}

/** The quiet tenant: createKey then verifyKey, one at a time, until `until`. */
async function quiet(base: string, apiId: string, key: string, until: number): Promise<Quiet> {
  const created: number[] = [];
  const verified: number[] = [];
  let failures = 0;
  while (Date.now() < until) {
    let t = performance.now();
    const c = await post(base, "keys.createKey", { apiId, name: "quiet" });
    created.push(performance.now() - t);
    t = performance.now();
    const v = await post(base, "keys.verifyKey", { key });
    verified.push(performance.now() - t);
    if (c.status !== 200 || v.status !== 200 || !v.body.data.valid) failures++;
  }
  return { createKey: summarize(created, 2), verifyKey: summarize(verified, 2), failures };
}

/** The server's peak RSS across each hostile analytics query, run twice at once. */
async function peakMemory(base: string, key: string, pid: number) {
  const before = memoryOf(pid).peakMb;
  const out = [];
  for (const query of HOSTILE_QUERIES) {
    const answers = await Promise.all(
      [0, 1].map(() => post(base, "analytics.getVerifications", { query }, { key })),
    );
    out.push({
      query: query.slice(0, 60),
      statuses: answers.map((a) => a.status),
      codes: answers.map(
        (a) =>
          String(a.body.error?.type ?? "ok")
            .split("/")
            .at(-1) ?? "ok",
      ),
      peakGrowthMb: round(memoryOf(pid).peakMb - before, 1),
    });
  }
  return out;
}

/** Starts the noisy tenant: `ready` once its bodies are built, `done` with its counts. */
function startNoisy(data: NoisyTenantData) {
  const worker = new Worker(new URL("./noisy-tenant.ts", import.meta.url), { workerData: data });
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  const message = <T>() => Promise.race([failed, new Promise<T>((r) => worker.once("message", r))]);
  const ready = message<string>();
  return { ready, done: ready.then(() => message<Record<string, number>>()) };
}

export default defineScenario<NoisySettings, NoisyResult>({
  name: "noisy-neighbour",
  description:
    "a quiet tenant's latency while another tenant sends the heaviest requests (PostgreSQL)",
  settings: ({ quick, args }) => {
    noArgs("noisy-neighbour", args);
    return {
      seconds: setting("BENCH_SECONDS", 20, 3, quick),
      noisyConnections: setting("BENCH_NOISY_CONNECTIONS", 6, 3, quick),
      noisyKinds: (
        process.env.BENCH_NOISY_KINDS ?? "migrateKeys,analytics,createKey,analytics"
      ).split(","),
      serverEnv: JSON.parse(process.env.LATCHKEY_ENV ?? "{}"),
    };
  },
  run: ({ settings: s }) =>
    withDatabase("noisy", (db) =>
      withLatchkey({ databaseUrl: db.url, env: s.serverEnv }, async (lk) => {
        const noisyKey = noisyTenantKey(db.url);
        const quietApi = (await call(lk.base, "apis.createApi", { name: "quiet" })).apiId;
        const quietKey = (await call(lk.base, "keys.createKey", { apiId: quietApi })).key;
        const noisyApi = (
          await call(lk.base, "apis.createApi", { name: "noisy" }, { key: noisyKey })
        ).apiId;
        const roles = Array.from({ length: 100 }, (_, i) => `role_${i}`);
        for (const name of roles)
          await call(lk.base, "permissions.createRole", { name }, { key: noisyKey });
        await quiet(lk.base, quietApi, quietKey, Date.now() + 2_000); // warm-up
        const memory = await peakMemory(lk.base, noisyKey, lk.pid);
        const alone = await quiet(lk.base, quietApi, quietKey, Date.now() + s.seconds * 1000);
        const noisy = startNoisy({
          base: lk.base,
          key: noisyKey,
          apiId: noisyApi,
          roles,
          seconds: s.seconds,
          connections: s.noisyConnections,
          kinds: s.noisyKinds,
        });
        await noisy.ready;
        const underLoad = await quiet(lk.base, quietApi, quietKey, Date.now() + s.seconds * 1000);
        const noisyAnswers = await noisy.done;
        console.log(JSON.stringify({ alone, underLoad, noisyAnswers }));
        return { memory, alone, underLoad, noisyAnswers };
      }),
    ),
  render(r) {
    const row = (label: string, q: Quiet) => [
      label,
      `${ms(q.createKey.p50Ms, 1)} / ${ms(q.createKey.p99Ms, 1)} (max ${ms(q.createKey.maxMs, 0)})`,
      `${ms(q.verifyKey.p50Ms, 1)} / ${ms(q.verifyKey.p99Ms, 1)} (max ${ms(q.verifyKey.maxMs, 0)})`,
      q.failures,
    ];
    const peak = Math.max(...r.memory.map((m) => m.peakGrowthMb));
    const codes = [...new Set(r.memory.flatMap((m) => m.codes))].join(", ");
    return [
      table(
        ["quiet tenant", "createKey p50 / p99:", "verifyKey p50 / p99:", "failures:"],
        [row("alone", r.alone), row("with the noisy tenant", r.underLoad)],
      ),
      `The noisy tenant's answers: ${Object.entries(r.noisyAnswers)
        .map(([k, n]) => `${k} ×${num(n, 0)}`)
        .join(
          ", ",
        )}. Hostile analytics queries, two at a time: the server's peak RSS grew by ${num(peak, 0)} MB at most (answers: ${codes}).`,
    ].join("\n\n");
  },
});
