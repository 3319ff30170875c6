// Mixed open-loop load on three Latchkey processes (one fresh PostgreSQL database, Redis):
// mostly verifications with credits and a rate limit, some key writes, some ratelimit.limit;
// every node's memory and the calls' latency sampled at a fixed interval. The chart of the
// latest run is docs/images/soak.png.
import { metricsOf, post } from "../../lib/api.ts";
import { withDatabase } from "../../lib/database.ts";
import { ms, num } from "../../lib/markdown.ts";
import { defineScenario, noArgs, setting } from "../../lib/scenario.ts";
import { type Latchkey, startLatchkey } from "../../lib/server.ts";
import { round, summarize } from "../../lib/stats.ts";
import { type Sample, soakChart } from "./chart.ts";

export interface SoakSettings {
  seconds: number;
  /** Calls per second, all nodes together. */
  rate: number;
  nodes: number;
  sampleSeconds: number;
  redisUrl: string;
}

export interface SoakResult {
  samples: Sample[];
  summary: {
    /** Calls sent on the schedule, and answered (any status) by the end. */
    sent: number;
    answered: number;
    /** Calls answered within the sampled windows. */
    calls: number;
    rssMbFirst: number[];
    rssMbLast: number[];
    rssMbMax: number;
    p99MsWorst: number;
    non2xx: number;
  };
}

interface State {
  apiId: string;
  keys: { key: string; keyId: string }[];
}

/** The mix: 15 of 20 verifications, 2 createKey, 1 updateKey, 2 ratelimit.limit. */
function nextCall(state: State, i: number): [string, unknown] {
  const r = i % 20;
  const key = state.keys[i % state.keys.length] ?? { key: "", keyId: "" };
  if (r < 15) return ["keys.verifyKey", { key: key.key, credits: { cost: 1 } }];
  if (r < 17) return ["keys.createKey", { apiId: state.apiId, credits: { remaining: 1_000_000 } }];
  if (r < 18) return ["keys.updateKey", { keyId: key.keyId, meta: { touched: i } }];
  return [
    "ratelimit.limit",
    { namespace: "soak", identifier: `u${i % 100}`, limit: 1_000_000, duration: 60_000 },
  ];
}

async function soak(
  nodes: Latchkey[],
  s: SoakSettings,
): Promise<{ samples: Sample[]; sent: number; answered: number }> {
  const bases = nodes.map((n) => n.base);
  const first = bases[0] ?? "";
  const state: State = {
    apiId: (await post(first, "apis.createApi", { name: "soak" })).body.data.apiId,
    keys: [],
  };
  for (let i = 0; i < 100; i++) {
    const r = await post(bases[i % bases.length] ?? first, "keys.createKey", {
      apiId: state.apiId,
      credits: { remaining: 1_000_000_000 },
      ratelimits: [{ name: "requests", limit: 1_000_000, duration: 60_000 }],
    });
    state.keys.push(r.body.data);
  }
  const samples: Sample[] = [];
  let window: number[] = [];
  let statuses: Record<string, number> = {};
  let sent = 0;
  let answered = 0;
  const start = performance.now();
  let nextSample = start + s.sampleSeconds * 1000;
  const inflight = new Set<Promise<void>>();
  // Open loop: calls leave on schedule whatever the answers do.
  while (performance.now() - start < s.seconds * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * s.rate);
    while (sent < due) {
      const i = sent++;
      const [procedure, body] = nextCall(state, i);
      const t = performance.now();
      // Verifications come from the keys' holders, without the root key.
      const key = procedure === "keys.verifyKey" ? null : undefined;
      const p: Promise<void> = post(bases[i % bases.length] ?? first, procedure, body, { key })
        .then((r) => r.status)
        .catch(() => 0)
        .then((status) => {
          answered++;
          window.push(performance.now() - t);
          statuses[status] = (statuses[status] ?? 0) + 1;
          inflight.delete(p);
        });
      inflight.add(p);
    }
    if (performance.now() >= nextSample) {
      nextSample += s.sampleSeconds * 1000;
      // The window closes now: calls answered while the nodes' metrics are read count in the next.
      const latency = summarize(window, 2);
      const counted = statuses;
      window = [];
      statuses = {};
      const sample: Sample = {
        seconds: Math.round((performance.now() - start) / 1000),
        calls: latency.count,
        p50Ms: latency.p50Ms,
        p99Ms: latency.p99Ms,
        statuses: counted,
        nodes: await Promise.all(
          nodes.map(async (n) => {
            const m = await metricsOf(n.admin);
            return {
              rssMb: round((m.values.process_resident_memory_bytes ?? 0) / 2 ** 20),
              heapUsedMb: round((m.values.nodejs_heap_size_used_bytes ?? 0) / 2 ** 20),
            };
          }),
        ),
      };
      samples.push(sample);
      console.log(JSON.stringify(sample));
    }
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(inflight);
  return { samples, sent, answered };
}

export default defineScenario<SoakSettings, SoakResult>({
  name: "soak",
  description:
    "mixed open-loop load on three processes, memory and latency over time (PostgreSQL, Redis)",
  settings: ({ quick, args }) => {
    noArgs("soak", args);
    return {
      seconds: setting("BENCH_SOAK_SECONDS", 600, 30, quick),
      rate: setting("BENCH_SOAK_RATE", 300, 300, quick),
      nodes: 3,
      sampleSeconds: quick ? 5 : 10,
      redisUrl: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379",
    };
  },
  run: ({ settings: s }) =>
    withDatabase("soak", async (db) => {
      const nodes: Latchkey[] = [];
      try {
        for (let i = 0; i < s.nodes; i++) {
          nodes.push(await startLatchkey({ databaseUrl: db.url, env: { REDIS_URL: s.redisUrl } }));
        }
        const { samples, sent, answered } = await soak(nodes, s);
        const rss = samples.flatMap((x) => x.nodes.map((n) => n.rssMb));
        return {
          samples,
          summary: {
            sent,
            answered,
            calls: samples.reduce((n, x) => n + x.calls, 0),
            rssMbFirst: samples[0]?.nodes.map((n) => n.rssMb) ?? [],
            rssMbLast: samples.at(-1)?.nodes.map((n) => n.rssMb) ?? [],
            rssMbMax: Math.max(...rss),
            p99MsWorst: Math.max(...samples.map((x) => x.p99Ms ?? 0)),
            non2xx: samples.reduce(
              (n, x) =>
                n + Object.entries(x.statuses).reduce((m, [k, v]) => m + (k === "200" ? 0 : v), 0),
              0,
            ),
          },
        };
      } finally {
        await Promise.all(nodes.map((n) => n.stop()));
      }
    }),
  render(r, s) {
    const x = r.summary;
    const p50s = r.samples.flatMap((y) => (y.p50Ms === null ? [] : [y.p50Ms]));
    return [
      `![Soak: resident memory per node and call latency](images/soak.png)`,
      `${num(x.sent, 0)} calls sent over ${num(s.seconds, 0)} s at ${s.rate} calls/s on ${s.nodes} nodes, ${num(x.answered, 0)} answered by the end, ${num(x.non2xx, 0)} of the sampled ${num(x.calls, 0)} not 200. RSS per node ${x.rssMbFirst.map((v) => num(v, 0)).join(" / ")} MB at the first sample, ${x.rssMbLast.map((v) => num(v, 0)).join(" / ")} MB at the last (at most ${num(x.rssMbMax, 0)}); p50 per ${s.sampleSeconds} s window ${ms(Math.min(...p50s), 1)}-${ms(Math.max(...p50s), 1)}, worst p99 ${ms(x.p99MsWorst, 0)}.`,
    ].join("\n\n");
  },
  images: (r, s) => [{ file: "soak.png", png: soakChart(r.samples, s.rate, s.sampleSeconds) }],
});
