// A gateway in front of an API: nginx alone, then nginx with Latchkey deciding every request
// (auth_request, the documented configuration docs/gateways/nginx.conf), at one fixed rate,
// open loop (bench/lib/load/open-loop.ts: latency from each request's scheduled send time).
// The servers (nginx, the upstream bench/servers/upstream-http.ts and Latchkey on PGlite) are
// pinned to core 0, the generator to core 1. CPU per request is each server's CPU from /proc
// (every process and thread) over the whole run, warm-up included, divided by the requests it
// answered; so is the difference Latchkey makes, in CPU and in p99.

import { join } from "node:path";
import { call, ROOT_KEY } from "../lib/api.ts";
import { projectRoot } from "../lib/dist.ts";
import { spawnLoad } from "../lib/load/open-loop.ts";
import { ms, num, table } from "../lib/markdown.ts";
import { documentedSite, NGINX, type Nginx, startNginx } from "../lib/nginx.ts";
import { processTreeCpuMs, processUsage } from "../lib/proc.ts";
import { startProcess } from "../lib/process.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { withLatchkey } from "../lib/server.ts";

const SERVER_CPU = 0;
const GENERATOR_CPU = 1;

export interface GatewaySettings {
  rate: number;
  seconds: number;
  warmupSeconds: number;
}

/** One setup at the fixed rate. */
export interface GatewayCase {
  achievedRate: number;
  answered: number;
  non2xx: number;
  errors: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** CPU per request answered, by server, and all of them. */
  cpuUs: { nginx: number; upstream: number; latchkey: number | null; total: number };
}

export interface GatewayResult {
  nginxAlone: GatewayCase;
  withLatchkey: GatewayCase;
  /** What Latchkey adds: CPU per request (every server) and p99. */
  added: { cpuUs: number; p99Ms: number | null };
}

/** The site of nginx alone: the same proxying as the documented one, without auth_request. */
const plainSite = (upstream: string) => (listen: string) =>
  `
upstream protected_api {
    server ${upstream};
    keepalive 16;
}
server {
    listen ${listen};
    location / {
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_pass http://protected_api;
    }
}
`;

/** CPU ms of the processes a case measures: nginx's master and worker, the others. */
function cpuMs(nginx: Nginx, upstreamPid: number, latchkeyPid?: number) {
  return {
    nginx: processTreeCpuMs(nginx.pid),
    upstream: processUsage(upstreamPid).cpuMs,
    latchkey: latchkeyPid === undefined ? null : processUsage(latchkeyPid).cpuMs,
  };
}

/** Runs the fixed-rate load through nginx and measures every server it reaches. */
async function measure(
  s: GatewaySettings,
  nginx: Nginx,
  upstreamPid: number,
  key: string | undefined,
  latchkeyPid?: number,
): Promise<GatewayCase> {
  const before = cpuMs(nginx, upstreamPid, latchkeyPid);
  const r = await spawnLoad(
    {
      mode: "open",
      url: `http://127.0.0.1:${nginx.port}/orders`,
      body: "{}",
      headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
      rate: s.rate,
      seconds: s.seconds,
      warmupSeconds: s.warmupSeconds,
    },
    GENERATOR_CPU,
  );
  const after = cpuMs(nginx, upstreamPid, latchkeyPid);
  const per = (a: number, b: number) =>
    Math.round((1000 * (a - b)) / Math.max(1, r.handledWithWarmup));
  const cpu = {
    nginx: per(after.nginx, before.nginx),
    upstream: per(after.upstream, before.upstream),
    latchkey:
      after.latchkey === null || before.latchkey === null
        ? null
        : per(after.latchkey, before.latchkey),
  };
  return {
    achievedRate: r.achievedRate,
    answered: r.answered,
    non2xx: r.non2xx,
    errors: r.errors,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    maxMs: r.maxMs,
    cpuUs: { ...cpu, total: cpu.nginx + cpu.upstream + (cpu.latchkey ?? 0) },
  };
}

export default defineScenario<GatewaySettings, GatewayResult>({
  name: "gateway",
  description:
    "nginx alone and nginx with Latchkey (auth_request) at a fixed rate: CPU per request, p99",
  settings: ({ quick, args }) => {
    noArgs("gateway", args);
    return {
      rate: setting("BENCH_RATE", 1000, 300, quick),
      seconds: setting("BENCH_SECONDS", 30, 3, quick),
      warmupSeconds: setting("BENCH_WARMUP_SECONDS", 5, 1, quick),
    };
  },
  async run({ settings: s, check }) {
    if (!NGINX) throw new Error("nginx is not installed (apt-get install nginx)");
    const upstream = await startProcess(
      [process.execPath, join(projectRoot, "bench/servers/upstream-http.ts")],
      { ready: /\{"port":(\d+)\}/, cpu: SERVER_CPU },
    );
    const upstreamAt = `127.0.0.1:${upstream.match[1]}`;
    try {
      const alone = await startNginx(plainSite(upstreamAt), { cpu: SERVER_CPU });
      const nginxAlone = await measure(s, alone, upstream.pid, undefined).finally(() =>
        alone.stop(),
      );
      console.log(`nginx alone: p99 ${nginxAlone.p99Ms} ms, ${nginxAlone.cpuUs.total} us/request`);
      const withLk = await withLatchkey(
        { cpu: SERVER_CPU, env: { TRUSTED_PROXIES: "127.0.0.1" } },
        async (lk) => {
          const apiId = (await call(lk.base, "apis.createApi", { name: "gateway" })).apiId;
          const { key } = await call(lk.base, "keys.createKey", { apiId });
          // The environment's ROOT_KEY stands for the gateway's root key: a narrow one costs
          // the same (one grant to match), and the CLI that makes one needs the database.
          const settings = {
            latchkey: `127.0.0.1:${lk.port}`,
            upstream: upstreamAt,
            apiId,
            rootKey: ROOT_KEY,
          };
          const nginx = await startNginx((listen) => documentedSite(settings, listen), {
            cpu: SERVER_CPU,
          });
          return measure(s, nginx, upstream.pid, key, lk.pid).finally(() => nginx.stop());
        },
      );
      console.log(`nginx + Latchkey: p99 ${withLk.p99Ms} ms, ${withLk.cpuUs.total} us/request`);
      for (const [name, c] of [
        ["nginx alone", nginxAlone],
        ["nginx + Latchkey", withLk],
      ] as const) {
        check(c.non2xx === 0 && c.errors === 0, `${name}: ${c.non2xx} non-2xx, ${c.errors} errors`);
      }
      return {
        nginxAlone,
        withLatchkey: withLk,
        added: {
          cpuUs: withLk.cpuUs.total - nginxAlone.cpuUs.total,
          p99Ms:
            withLk.p99Ms === null || nginxAlone.p99Ms === null
              ? null
              : Math.round((withLk.p99Ms - nginxAlone.p99Ms) * 1000) / 1000,
        },
      };
    } finally {
      await upstream.stop();
    }
  },
  render: (r, s) => {
    const row = (name: string, c: GatewayCase) => [
      name,
      num(c.achievedRate, 0),
      ms(c.p50Ms),
      ms(c.p99Ms),
      ms(c.maxMs),
      c.cpuUs.total,
      c.cpuUs.nginx,
      c.cpuUs.latchkey ?? "–",
      c.cpuUs.upstream,
    ];
    return [
      `At ${s.rate} requests a second for ${s.seconds} s (after ${s.warmupSeconds} s of warm-up); CPU in us per request.`,
      "",
      table(
        ["setup", "req/s:", "p50:", "p99:", "max:", "CPU:", "nginx:", "Latchkey:", "upstream:"],
        [row("nginx alone", r.nginxAlone), row("nginx + Latchkey", r.withLatchkey)],
      ),
      "",
      `Latchkey adds ${r.added.cpuUs} us of CPU per request (every server) and ${ms(r.added.p99Ms)} at p99.`,
    ].join("\n");
  },
});
