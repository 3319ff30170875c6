// CPU profiles and heap readings of a server under test: through its inspector (`--inspect`),
// profiling only the measured seconds, or from the files `--cpu-prof` writes at exit (one per
// thread), cut to a measured window.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  /** CLOCK_MONOTONIC, us. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Sampled time that was not (idle), ms: what the percentages are of. */
  busyMs: number;
  /** Sampled time, (idle) included, ms. */
  sampledMs: number;
  /** The functions with the most self time. */
  top: { fn: string; selfPercent: number }[];
  /** Self time by where the code lives: a package, a folder of dist/src, Node, wasm, V8. */
  byModule: { group: string; selfPercent: number }[];
}

interface InspectorMessage {
  id?: number;
  // biome-ignore lint/suspicious/noExplicitAny: the protocol's results differ by method
  result?: any;
  error?: { message: string };
}

/** A session on an inspector (host:port/id): `send(method, params)` resolves with the result. */
async function inspectorSession(inspector: string) {
  const ws = new WebSocket(`ws://${inspector}`);
  const pending = new Map<number, (m: InspectorMessage) => void>();
  const closed = new Promise<never>((_, reject) => {
    ws.onclose = () => reject(new Error("inspector connection closed"));
    ws.onerror = () => reject(new Error("inspector connection failed"));
  });
  closed.catch(() => {});
  await Promise.race([new Promise((resolve) => ws.addEventListener("open", resolve)), closed]);
  ws.onmessage = (e) => {
    const m = JSON.parse(String(e.data)) as InspectorMessage;
    if (m.id !== undefined) pending.get(m.id)?.(m);
  };
  let id = 0;
  const send = async (method: string, params: Record<string, unknown> = {}) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`inspector: ${method} timed out`)), 120_000);
    });
    try {
      const m = await Promise.race([
        new Promise<InspectorMessage>((resolve) => {
          pending.set(++id, resolve);
          ws.send(JSON.stringify({ id, method, params }));
        }),
        closed,
        timeout,
      ]);
      if (m.error) throw new Error(`inspector: ${method}: ${m.error.message}`);
      return m.result;
    } finally {
      clearTimeout(timer);
    }
  };
  return { send, close: () => ws.close() };
}

function requireInspector(inspector: string | undefined): string {
  if (!inspector) throw new Error("the server was not started with inspect: true");
  return inspector;
}

/** Runs `fn` while the server's CPU profiler samples every `intervalUs`. */
export async function profileWhile<T>(
  inspector: string | undefined,
  fn: () => Promise<T>,
  intervalUs = 500,
): Promise<{ value: T; profile: ProfileSummary }> {
  const s = await inspectorSession(requireInspector(inspector));
  try {
    await s.send("Profiler.enable");
    await s.send("Profiler.setSamplingInterval", { interval: intervalUs });
    await s.send("Profiler.start");
    const value = await fn();
    const { profile } = (await s.send("Profiler.stop")) as { profile: CpuProfile };
    return { value, profile: summarizeProfile(profile) };
  } finally {
    s.close();
  }
}

/** Forces two full collections in the server, then reads its heap (bytes). */
export async function heapAfterGc(inspector: string | undefined): Promise<number> {
  const s = await inspectorSession(requireInspector(inspector));
  try {
    await s.send("HeapProfiler.collectGarbage");
    await s.send("HeapProfiler.collectGarbage");
    return ((await s.send("Runtime.getHeapUsage")) as { usedSize: number }).usedSize;
  } finally {
    s.close();
  }
}

function groupOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("wasm:")) return "wasm";
  if (url.startsWith("node:")) return "node: internals";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1]) return pkg[1];
  const src = /dist\/src\/([^/]+)/.exec(url);
  return src ? `dist/src/${src[1]}` : url.replace(/^.*\//, "");
}

/** Where a frame's code is, short: a package's path, dist/..., node:..., wasm://... */
function placeOf(url: string): string {
  const at = url.lastIndexOf("node_modules/");
  if (at >= 0) return url.slice(at + "node_modules/".length);
  return url.replace(/^.*\/(dist\/|node:)/, "$1").replace(/^file:\/\/.*\//, "");
}

function functionOf(frame: CallFrame): string {
  const where = frame.url ? `${placeOf(frame.url)}:${frame.lineNumber + 1}` : "";
  return `${frame.functionName || "(anonymous)"} ${where}`.trim();
}

/**
 * Self time by function (top `top`, 20) and by module (top 15), in percent of the busy
 * (not idle) time of the samples, or of those within `window` (CLOCK_MONOTONIC us).
 */
export function summarizeProfile(
  profile: CpuProfile,
  options: { window?: { startUs: number; endUs: number }; top?: number } = {},
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byFunction = new Map<string, number>();
  const byGroup = new Map<string, number>();
  const w = options.window;
  let total = 0;
  let sampled = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (!frame || (w && (at < w.startUs || at > w.endUs))) return;
    sampled += dt;
    if (frame.functionName === "(idle)") return;
    total += dt;
    const fn = functionOf(frame);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
    const group = groupOf(frame);
    byGroup.set(group, (byGroup.get(group) ?? 0) + dt);
  });
  const percent = (us: number) => Math.round((1000 * us) / Math.max(1, total)) / 10;
  const ranked = (m: Map<string, number>, limit: number) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  return {
    busyMs: Math.round(total / 1000),
    sampledMs: Math.round(sampled / 1000),
    top: ranked(byFunction, options.top ?? 20).map(([fn, us]) => ({
      fn,
      selfPercent: percent(us),
    })),
    byModule: ranked(byGroup, 15).map(([group, us]) => ({ group, selfPercent: percent(us) })),
  };
}

/** Prints a profile's hottest functions and its modules. */
export function printProfile(title: string, p: ProfileSummary): void {
  console.log(`${title} (self time):`);
  for (const t of p.top.slice(0, 10))
    console.log(`  ${String(t.selfPercent).padStart(5)}%  ${t.fn}`);
  console.log(`  ${p.byModule.map((m) => `${m.group} ${m.selfPercent}%`).join(", ")}`);
}

export interface ThreadProfile {
  /** The profile's file name (CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile). */
  file: string;
  summary: ProfileSummary;
}

/**
 * The profiles `--cpu-prof` wrote into `dir` (one process): the main thread's (thread 0) and
 * the busiest other thread's (a worker: PGlite's), each cut to `window`, top 15 functions.
 */
export function summarizeProfileDir(
  dir: string,
  window: { startUs: number; endUs: number },
): { main: ThreadProfile | null; busiestWorker: ThreadProfile | null; workers: number } {
  const threads = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((file) => {
      const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
      const thread = Number(file.split(".").at(-3));
      return { file, thread, summary: summarizeProfile(profile, { window, top: 15 }) };
    });
  const workers = threads.filter((t) => t.thread !== 0);
  const busiest = workers.toSorted((a, b) => b.summary.busyMs - a.summary.busyMs)[0];
  const main = threads.find((t) => t.thread === 0);
  const pick = (t: (typeof threads)[number] | undefined) =>
    t ? { file: t.file, summary: t.summary } : null;
  return { main: pick(main), busiestWorker: pick(busiest), workers: workers.length };
}
