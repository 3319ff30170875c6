// npm run soak: mixed load on three Latchkey processes (one fresh PostgreSQL database, Redis)
// for SOAK_SECONDS (default 600), sampling every node's memory and the calls' latency every
// 10 s. Writes the raw samples (JSON) and a chart (PNG) to bench/results/.
//
//   SOAK_SECONDS=600   how long the load runs
//   SOAK_RATE=300      calls per second, all nodes together (open loop)
//   BENCH_DATABASE_URL admin URL (default postgres://postgres@127.0.0.1:5432/test)
//   BENCH_REDIS_URL    Redis (default redis://127.0.0.1:6379)
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { withDatabase, withLatchkey } from "./lib.mjs";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE = Number(process.env.SOAK_RATE ?? 300);
const SAMPLE_MS = 10_000;
const NODES = 3;
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const results = new URL("./results/", import.meta.url).pathname;
const rootKey = "bench_root_key_0123456789abcdef";
const auth = { authorization: `Bearer ${rootKey}` };

/** One JSON call; returns status and latency, never throws. */
async function call(base, procedure, body, headers = auth) {
  const started = performance.now();
  try {
    const res = await fetch(`${base}/v2/${procedure}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    const data = await res.json();
    return { status: res.status, ms: performance.now() - started, data: data.data };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

/** A gauge of a node's /metrics (sum over label sets). */
async function gauge(base, name) {
  const text = await (await fetch(`${base}/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
}

const pct = (sorted, q) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const round = (x) => Math.round(x * 100) / 100;

/** The mix: mostly verifications (credits and a rate limit), some writes, some ratelimit.limit. */
function nextCall(state, i) {
  const r = i % 20;
  if (r < 15) {
    const key = state.keys[i % state.keys.length];
    return ["keys.verifyKey", { key: key.key, credits: { cost: 1 } }, {}];
  }
  if (r < 17) return ["keys.createKey", { apiId: state.apiId, credits: { remaining: 1_000_000 } }];
  if (r < 18) {
    const key = state.keys[i % state.keys.length];
    return ["keys.updateKey", { keyId: key.keyId, meta: { touched: i } }];
  }
  return [
    "ratelimit.limit",
    { namespace: "soak", identifier: `u${i % 100}`, limit: 1_000_000, duration: 60_000 },
  ];
}

async function soak(bases) {
  const state = {
    apiId: (await call(bases[0], "apis.createApi", { name: "soak" })).data.apiId,
    keys: [],
  };
  for (let i = 0; i < 100; i++) {
    const r = await call(bases[i % NODES], "keys.createKey", {
      apiId: state.apiId,
      credits: { remaining: 1_000_000_000 },
      ratelimits: [{ name: "requests", limit: 1_000_000, duration: 60_000 }],
    });
    state.keys.push(r.data);
  }
  const samples = [];
  let window = [];
  let statuses = {};
  let sent = 0;
  const start = performance.now();
  let nextSample = start + SAMPLE_MS;
  const inflight = new Set();
  // Open loop: calls leave on schedule whatever the answers do.
  while (performance.now() - start < SECONDS * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * RATE);
    while (sent < due) {
      const i = sent++;
      const [procedure, body, headers] = nextCall(state, i);
      const p = call(bases[i % NODES], procedure, body, headers ?? auth).then((r) => {
        window.push(r.ms);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        inflight.delete(p);
      });
      inflight.add(p);
    }
    if (performance.now() >= nextSample) {
      nextSample += SAMPLE_MS;
      const sorted = window.sort((a, b) => a - b);
      const nodes = await Promise.all(
        bases.map(async (b) => ({
          rssMb: round((await gauge(b, "latchkey_process_resident_memory_bytes")) / 2 ** 20),
          heapUsedMb: round((await gauge(b, "latchkey_nodejs_heap_size_used_bytes")) / 2 ** 20),
        })),
      );
      const sample = {
        seconds: Math.round((performance.now() - start) / 1000),
        calls: sorted.length,
        p50Ms: round(pct(sorted, 0.5)),
        p99Ms: round(pct(sorted, 0.99)),
        statuses,
        nodes,
      };
      samples.push(sample);
      console.log(JSON.stringify(sample));
      window = [];
      statuses = {};
    }
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(inflight);
  return samples;
}

/** A two-panel SVG: RSS per node (MB) and p50/p99 latency (ms) over time. */
function chart(samples) {
  const W = 900;
  const H = 260;
  const pad = 70;
  const xs = (s) => pad + ((W - 2 * pad) * s.seconds) / Math.max(1, samples.at(-1)?.seconds ?? 1);
  const panel = (top, title, series, unit) => {
    const max = Math.max(1, ...series.flatMap((se) => samples.map(se.value)));
    const ys = (v) => top + H - pad - ((H - 2 * pad) * v) / max;
    const lines = series
      .map((se) => {
        const d = samples
          .map((s, i) => `${i ? "L" : "M"}${xs(s).toFixed(1)},${ys(se.value(s)).toFixed(1)}`)
          .join("");
        return `<path d="${d}" fill="none" stroke="${se.color}" stroke-width="2"/>`;
      })
      .join("");
    const legend = series
      .map(
        (se, i) =>
          `<text x="${W - 190}" y="${top + 30 + i * 16}" fill="${se.color}" font-size="12">${se.name}</text>`,
      )
      .join("");
    return `<text x="${pad}" y="${top + 24}" font-size="14" font-weight="bold">${title}</text>
      <line x1="${pad}" y1="${top + H - pad}" x2="${W - pad}" y2="${top + H - pad}" stroke="#999"/>
      <line x1="${pad}" y1="${top + pad}" x2="${pad}" y2="${top + H - pad}" stroke="#999"/>
      <text x="${pad - 6}" y="${top + pad + 4}" font-size="11" text-anchor="end">${round(max)}</text>
      <text x="${pad - 6}" y="${top + H - pad + 4}" font-size="11" text-anchor="end">0 ${unit}</text>
      <text x="${W - pad}" y="${top + H - pad + 16}" font-size="11" text-anchor="end">${samples.at(-1)?.seconds ?? 0} s</text>
      ${lines}${legend}`;
  };
  const colors = ["#1f77b4", "#ff7f0e", "#2ca02c"];
  const memory = panel(
    0,
    `Resident memory per node (MB), ${RATE} calls/s`,
    Array.from({ length: NODES }, (_, n) => ({
      name: `node ${n}`,
      color: colors[n],
      value: (s) => s.nodes[n].rssMb,
    })),
    "MB",
  );
  const latency = panel(
    H,
    "Latency of the calls (ms), every 10 s",
    [
      { name: "p50", color: "#2ca02c", value: (s) => s.p50Ms },
      { name: "p99", color: "#d62728", value: (s) => s.p99Ms },
    ],
    "ms",
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${2 * H}" font-family="DejaVu Sans">
    <rect width="100%" height="100%" fill="white"/>${memory}${latency}</svg>`;
}

async function main() {
  const samples = await withDatabase("soak", (url) =>
    withLatchkey(url, { ROOT_KEY: rootKey, REDIS_URL: redisUrl }, async (first) => {
      const others = [];
      try {
        for (let i = 1; i < NODES; i++)
          others.push(await withLatchkey.start(url, { ROOT_KEY: rootKey, REDIS_URL: redisUrl }));
        return await soak([first, ...others.map((o) => o.base)]);
      } finally {
        await Promise.all(others.map((o) => o.stop()));
      }
    }),
  );
  const first = samples[0];
  const last = samples.at(-1);
  const result = {
    benchmark: "soak",
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model },
    runtime: process.version,
    settings: {
      seconds: SECONDS,
      ratePerSecond: RATE,
      nodes: NODES,
      sampleSeconds: SAMPLE_MS / 1000,
    },
    summary: {
      rssMbFirst: first?.nodes.map((n) => n.rssMb),
      rssMbLast: last?.nodes.map((n) => n.rssMb),
      p99MsWorst: Math.max(...samples.map((s) => s.p99Ms)),
      non2xx: samples.reduce(
        (n, s) =>
          n +
          Object.entries(s.statuses)
            .filter(([k]) => k !== "200")
            .reduce((m, [, v]) => m + v, 0),
        0,
      ),
    },
    samples,
  };
  const stamp = result.date.replace(/[:.]/g, "-").slice(0, 19);
  writeFileSync(join(results, `soak-${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(results, "soak-latest.json"), `${JSON.stringify(result, null, 2)}\n`);
  const png = new Resvg(chart(samples), { font: { loadSystemFonts: true } }).render().asPng();
  writeFileSync(join(results, `soak-${stamp}.png`), png);
  writeFileSync(join(results, "soak-latest.png"), png);
  console.log(JSON.stringify(result.summary));
}

await main();
