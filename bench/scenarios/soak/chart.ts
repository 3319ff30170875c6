// The soak's chart: resident memory per node and the calls' p50/p99 over time, as SVG drawn
// to PNG (docs/images/soak.png).
import { Resvg } from "@resvg/resvg-js";
import { round } from "../../lib/stats.ts";

export interface Sample {
  seconds: number;
  calls: number;
  p50Ms: number | null;
  p99Ms: number | null;
  statuses: Record<string, number>;
  nodes: { rssMb: number; heapUsedMb: number }[];
}

interface Series {
  name: string;
  color: string;
  value: (s: Sample) => number;
}

const W = 900;
const H = 260;
const PAD = 70;
const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c"];

function panel(
  samples: Sample[],
  top: number,
  title: string,
  series: Series[],
  unit: string,
): string {
  const end = Math.max(1, samples.at(-1)?.seconds ?? 1);
  const xs = (s: Sample) => PAD + ((W - 2 * PAD) * s.seconds) / end;
  const max = Math.max(1, ...series.flatMap((se) => samples.map(se.value)));
  const ys = (v: number) => top + H - PAD - ((H - 2 * PAD) * v) / max;
  const lines = series.map((se) => {
    const d = samples
      .map((s, i) => `${i ? "L" : "M"}${xs(s).toFixed(1)},${ys(se.value(s)).toFixed(1)}`)
      .join("");
    return `<path d="${d}" fill="none" stroke="${se.color}" stroke-width="2"/>`;
  });
  const legend = series.map(
    (se, i) =>
      `<text x="${W - 190}" y="${top + 30 + i * 16}" fill="${se.color}" font-size="12">${se.name}</text>`,
  );
  return `<text x="${PAD}" y="${top + 24}" font-size="14" font-weight="bold">${title}</text>
    <line x1="${PAD}" y1="${top + H - PAD}" x2="${W - PAD}" y2="${top + H - PAD}" stroke="#999"/>
    <line x1="${PAD}" y1="${top + PAD}" x2="${PAD}" y2="${top + H - PAD}" stroke="#999"/>
    <text x="${PAD - 6}" y="${top + PAD + 4}" font-size="11" text-anchor="end">${round(max)}</text>
    <text x="${PAD - 6}" y="${top + H - PAD + 4}" font-size="11" text-anchor="end">0 ${unit}</text>
    <text x="${W - PAD}" y="${top + H - PAD + 16}" font-size="11" text-anchor="end">${end} s</text>
    ${lines.join("")}${legend.join("")}`;
}

export function soakChart(samples: Sample[], rate: number, sampleSeconds: number): Uint8Array {
  const nodes = samples[0]?.nodes.length ?? 0;
  const memory = panel(
    samples,
    0,
    `Resident memory per node (MB), ${rate} calls/s`,
    Array.from({ length: nodes }, (_, n) => ({
      name: `node ${n}`,
      color: COLORS[n % COLORS.length] ?? "#000",
      value: (s: Sample) => s.nodes[n]?.rssMb ?? 0,
    })),
    "MB",
  );
  const latency = panel(
    samples,
    H,
    `Latency of the calls (ms), every ${sampleSeconds} s`,
    [
      { name: "p50", color: "#2ca02c", value: (s) => s.p50Ms ?? 0 },
      { name: "p99", color: "#d62728", value: (s) => s.p99Ms ?? 0 },
    ],
    "ms",
  );
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${2 * H}" font-family="DejaVu Sans">
    <rect width="100%" height="100%" fill="white"/>${memory}${latency}</svg>`;
  return new Resvg(svg, { font: { loadSystemFonts: true } }).render().asPng();
}
