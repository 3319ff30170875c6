import type http2 from "node:http2";
import type net from "node:net";
import type { Config } from "../config.js";
import type { Metrics } from "../metrics.js";

/** The bounds every listening port applies to its connections (docs/limits-and-timeouts.md). */
export interface ConnectionLimits {
  idleTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  maxConnections: number;
  h2MaxConcurrentStreams: number;
}

/** Counts a listening port reports to the metrics. */
export interface ConnectionCounters {
  /** A connection was closed at accept because the port was full. */
  refused(): void;
  /** A connection was accepted (+1) or has closed (-1). */
  open(delta: 1 | -1): void;
}

/**
 * Largest header list (uncompressed) of an HTTP/2 request: Node's default, stated here so
 * that it is a decision (Envoy's default is 60 KiB, nginx's 32 KiB for HTTP/1.1).
 */
export const H2_MAX_HEADER_LIST_BYTES = 65_535;
/**
 * Memory one HTTP/2 session may hold for its streams, header tables and unsent data, in MB;
 * beyond it Node refuses new streams on that session. Above Node's 10 so that a 10 MiB
 * analytics answer to a slow reader never trips it.
 */
export const H2_MAX_SESSION_MEMORY_MB = 32;
/** Streams refused (over the stream cap) a session may provoke before it is destroyed. */
const H2_MAX_REJECTED_STREAMS = 100;
/** Invalid frames a session may send before it is destroyed (Node's default). */
const H2_MAX_INVALID_FRAMES = 1_000;

/** The connection bounds of a configuration. */
export function connectionLimits(config: Config): ConnectionLimits {
  return {
    idleTimeoutMs: config.connectionIdleTimeoutMs,
    headersTimeoutMs: config.requestHeadersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    maxConnections: config.maxConnections,
    h2MaxConcurrentStreams: config.h2MaxConcurrentStreams,
  };
}

/** The counters of one listening port (`main` or `grpc`) in the metrics. */
export function connectionCounters(metrics: Metrics, listener: string): ConnectionCounters {
  const refused = metrics.connectionsRefused.labels(listener);
  const open = metrics.connectionsOpen.labels(listener);
  return {
    refused: () => refused.inc(),
    open: (delta) => open.inc(delta),
  };
}

/** Options of an HTTP/2 server that bound what one session may hold. */
export function h2ServerOptions(limits: ConnectionLimits): http2.ServerOptions {
  return {
    settings: {
      maxConcurrentStreams: limits.h2MaxConcurrentStreams,
      maxHeaderListSize: H2_MAX_HEADER_LIST_BYTES,
    },
    maxSessionMemory: H2_MAX_SESSION_MEMORY_MB,
    maxSessionRejectedStreams: H2_MAX_REJECTED_STREAMS,
    maxSessionInvalidFrames: H2_MAX_INVALID_FRAMES,
  };
}

/**
 * Caps a listening server at `maxConnections`: Node closes any connection beyond it as it
 * is accepted, before a byte is read, and the open ones are untouched. Refusals are counted,
 * not logged: under a flood a log line each would be a second flood.
 */
export function capConnections(
  server: net.Server,
  limits: ConnectionLimits,
  counters: ConnectionCounters,
): void {
  server.maxConnections = limits.maxConnections;
  server.on("drop", () => counters.refused());
  server.on("connection", (socket: net.Socket) => {
    counters.open(1);
    socket.once("close", () => counters.open(-1));
  });
}

/** Starts `server` listening on `port` and `host`; resolves to the port bound (for port 0). */
export function listenOn(server: net.Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}
