// Closed-loop loads: a fixed number of connections, each sending its next request when the
// last is answered, as fast as the server answers. autocannon (JavaScript, needs a core of its
// own on this machine) and h2load (C; HTTP/1.1 with --h1, or HTTP/2 streams).
import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";

export interface LoadOptions {
  url: string;
  body: string | Buffer;
  headers?: Record<string, string>;
  connections?: number;
  seconds: number;
  warmupSeconds?: number;
}

export interface AutocannonResult {
  tool: "autocannon";
  connections: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** These counts cover the warm-up too, so that they account for every request sent. */
  non2xx: number;
  errors: number;
  answered2xx: number;
  /** Answers `verifyBody` refused. */
  notValid?: number;
}

/** autocannon, POST with a JSON body, `connections` keep-alive connections. */
export async function autocannonLoad(
  options: LoadOptions & { verifyBody?: (body: string) => boolean },
): Promise<AutocannonResult> {
  const connections = options.connections ?? 50;
  const base = {
    url: options.url,
    method: "POST",
    body: options.body.toString(),
    headers: { "content-type": "application/json", ...options.headers },
    connections,
    ...(options.verifyBody ? { verifyBody: options.verifyBody } : {}),
  };
  const warm = await autocannon({ ...base, duration: options.warmupSeconds ?? 2 });
  const r = await autocannon({ ...base, duration: options.seconds });
  return {
    tool: "autocannon",
    connections,
    seconds: options.seconds,
    rps: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx + warm.non2xx,
    errors: r.errors + warm.errors,
    answered2xx: r["2xx"] + warm["2xx"],
    ...(options.verifyBody ? { notValid: r.mismatches + warm.mismatches } : {}),
  };
}

export interface H2loadResult {
  tool: "h2load --h1" | "h2load";
  connections: number;
  /** Concurrent streams per connection (HTTP/2). */
  streams: number;
  seconds: number;
  rps: number;
  meanLatency: string | undefined;
  ok2xx: number;
  succeeded: number;
  failed: number;
}

/**
 * h2load for `seconds` after a warm-up: HTTP/1.1 (`streams` absent) or HTTP/2 with `streams`
 * concurrent streams per connection. Needs h2load (`apt-get install nghttp2-client`).
 */
export async function h2loadLoad(
  options: LoadOptions & { streams?: number },
): Promise<H2loadResult> {
  const connections = options.connections ?? 50;
  const bodyFile = join(tmpdir(), `latchkey-bench-body-${process.pid}-${Date.now()}`);
  writeFileSync(bodyFile, options.body);
  const h1 = options.streams === undefined;
  const headers =
    h1 || !options.headers?.["content-type"]
      ? { "content-type": "application/json", ...options.headers }
      : options.headers;
  const args = [...(h1 ? ["--h1"] : ["-m", String(options.streams)]), "-c", String(connections)];
  args.push("-D", String(options.seconds), `--warm-up-time=${options.warmupSeconds ?? 2}`);
  args.push("-d", bodyFile);
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  args.push(options.url);
  try {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile("h2load", args, { maxBuffer: 1 << 24 }, (err, out) =>
        err
          ? reject(
              new Error(`h2load failed (apt-get install nghttp2-client): ${err.message}\n${out}`),
            )
          : resolve(out),
      ),
    );
    const done = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed/.exec(
      stdout,
    );
    return {
      tool: h1 ? "h2load --h1" : "h2load",
      connections,
      streams: options.streams ?? 1,
      seconds: options.seconds,
      rps: Math.round(Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(stdout)?.[1])),
      meanLatency: /time for request:\s+\S+\s+\S+\s+(\S+)/.exec(stdout)?.[1],
      ok2xx: Number(/status codes: (\d+) 2xx/.exec(stdout)?.[1]),
      succeeded: Number(done?.[1]),
      failed: Number(done?.[2]),
    };
  } finally {
    rmSync(bodyFile, { force: true });
  }
}

/**
 * Whether a closed-loop load got only 2xx answers. h2load counts a status when the headers
 * arrive: requests in flight at the warm-up's end or at the stop make its 2xx count and its
 * succeeded count differ by up to the requests in flight.
 */
export function allAnswered2xx(r: AutocannonResult | H2loadResult): boolean {
  if (r.tool === "autocannon") return r.non2xx === 0 && r.errors === 0;
  const inFlight = r.connections * r.streams;
  return r.failed === 0 && Math.abs(r.ok2xx - r.succeeded) <= inFlight && r.succeeded > 0;
}
