// The event-loop delay of a server under test, read the same way from Latchkey and from the
// bare servers: prom-client's default metrics `<prefix>nodejs_eventloop_lag_*_seconds` come
// from a perf_hooks.monitorEventLoopDelay histogram (10 ms resolution) that is RESET at every
// scrape, so a scrape just before a window and one right after it give that window's delays.
// The bare servers answer the same lines on a side port (serveEventLoopDelay).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { round } from "./stats.ts";

/** prom-client's default (eventLoopMonitoringPrecision): an idle loop reads about this much. */
export const EVENT_LOOP_RESOLUTION_MS = 10;

export interface EventLoopDelay {
  minMs: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

const FIELDS = {
  min: "minMs",
  mean: "meanMs",
  p50: "p50Ms",
  p90: "p90Ms",
  p99: "p99Ms",
  max: "maxMs",
};

/** The delays in a Prometheus text (any prefix, no labels needed); null when absent. */
export function parseEventLoopDelay(text: string): EventLoopDelay | null {
  const out: Partial<Record<keyof EventLoopDelay, number>> = {};
  const pattern =
    /^\w*?nodejs_eventloop_lag_(min|mean|p50|p90|p99|max)_seconds(?:\{[^}]*\})? (\S+)$/gm;
  for (const m of text.matchAll(pattern)) {
    const field = FIELDS[m[1] as keyof typeof FIELDS] as keyof EventLoopDelay;
    out[field] = round(Number(m[2]) * 1000, 3);
  }
  return Object.keys(out).length === Object.keys(FIELDS).length ? (out as EventLoopDelay) : null;
}

/** GETs `url` (a /metrics) and parses it; null when it fails or has no delays. */
export async function scrapeEventLoopDelay(url: string): Promise<EventLoopDelay | null> {
  try {
    return parseEventLoopDelay(await (await fetch(url)).text());
  } catch {
    return null;
  }
}

/**
 * For a bare server: a histogram like prom-client's and a side HTTP server on 127.0.0.1 (a
 * free port, returned) whose every GET answers the histogram in the metrics' names and resets
 * it. On a port of its own, like Latchkey's admin port: the measured server is left as it is.
 */
export function serveEventLoopDelay(): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  h.enable();
  const side = http.createServer((_req, res) => {
    const values = {
      min: h.min,
      mean: h.mean,
      p50: h.percentile(50),
      p90: h.percentile(90),
      p99: h.percentile(99),
      max: h.max,
    };
    h.reset();
    const text = Object.entries(values)
      .map(([k, ns]) => `nodejs_eventloop_lag_${k}_seconds ${ns / 1e9}\n`)
      .join("");
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(text);
  });
  return new Promise((resolve) => {
    side.listen(0, "127.0.0.1", () => resolve((side.address() as AddressInfo).port));
  });
}
