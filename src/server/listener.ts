import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { H2Sessions } from "./connection-h2.js";
import {
  type ConnectionCounters,
  type ConnectionLimits,
  capConnections,
  h2ServerOptions,
  listenOn,
} from "./connection-limits.js";
import { PendingConnections, Sweep, sweepIntervalMs } from "./connection-sweep.js";
import { Inflight } from "./inflight.js";
import type { NodeRequest, NodeResponse } from "./node-io.js";

/** The handler of every request, whatever the HTTP version. */
export type RequestHandler = (req: NodeRequest, res: NodeResponse) => void;

/** A listening server that can drain gracefully. */
export interface Listener {
  readonly port: number;
  /** Requests received whose responses have not completed. */
  inflight(): number;
  /** Stops accepting, lets in-flight requests finish (up to `timeoutMs`), then closes. */
  drain(timeoutMs: number): Promise<void>;
}

/** "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", the HTTP/2 connection preface. */
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
/**
 * Reads a new connection's first bytes until they match or diverge from the HTTP/2 preface
 * (they may arrive one at a time), puts them back and calls `route`. The socket is left
 * paused: an HTTP/2 session reads the bytes already buffered, then owns the native handle,
 * and resuming the JS stream would steal its data.
 */
function sniff(socket: net.Socket, route: (isH2: boolean) => void): void {
  let seen: Buffer = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, H2_PREFACE.length);
    const isH2 = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
    if (isH2 && n < H2_PREFACE.length) return;
    socket.off("data", onData);
    socket.pause();
    socket.unshift(seen);
    route(isH2);
  };
  socket.on("data", onData);
}

/**
 * Serves HTTP/1.1 and cleartext HTTP/2 on one port. HTTP/2 without TLS cannot be
 * negotiated, so each new connection is sniffed: bytes that start the HTTP/2 preface go
 * to the HTTP/2 server, anything else to the HTTP/1.1 server. Bytes may arrive one at a
 * time; the decision waits until they match or diverge from the preface.
 *
 * Every stage is bounded by `limits`: the port holds at most `maxConnections`; a connection
 * that sends nothing before its first request, or has no request in flight, is closed after
 * `idleTimeoutMs`; the first request's headers (HTTP/2: the preface and first HEADERS) must
 * arrive within `headersTimeoutMs` of its first byte and every request whole within
 * `requestTimeoutMs`; an HTTP/2 session holds at most `h2MaxConcurrentStreams` streams.
 */
export async function listen(
  handler: RequestHandler,
  port: number,
  host: string,
  limits: ConnectionLimits,
  counters: ConnectionCounters,
): Promise<Listener> {
  let draining = false;
  const inflight = new Inflight<NodeResponse>();
  const sockets = new Set<net.Socket>();
  const tickMs = sweepIntervalMs(limits.idleTimeoutMs, limits.headersTimeoutMs);
  const sweep = new Sweep(tickMs);
  const pending = new PendingConnections<net.Socket>(
    sweep,
    limits.idleTimeoutMs,
    limits.headersTimeoutMs,
  );
  const sessions = new H2Sessions(
    sweep,
    pending,
    limits.idleTimeoutMs,
    limits.requestTimeoutMs,
    inflight,
  );

  let onIdle: (() => void) | undefined;

  const track: RequestHandler = (req, res) => {
    const entry = inflight.add(res, sweep.nowMs);
    const session = sessions.requestStarted(res);
    const done = () => {
      if (!inflight.remove(entry)) return;
      if (session) sessions.requestDone(session);
      if (draining) {
        h1.closeIdleConnections();
        if (inflight.size === 0) onIdle?.();
      }
    };
    // `on`, not `once`: done() runs its work once anyway, and a response emits each event
    // once, so once's wrapper would be two more objects per request for nothing.
    res.on("close", done);
    // An HTTP/2 response is complete when its side of the stream has ended, even if the
    // client has not finished sending (an oversized gRPC message, say).
    if ("stream" in res) res.stream.on("finish", done);
    if (draining && req.httpVersionMajor === 1) res.setHeader("connection", "close");
    handler(req, res);
  };

  // Node enforces these three on HTTP/1.1 (answering 408 to a late request), with one
  // sweep over its connections every connectionsCheckingInterval.
  const h1 = http.createServer(
    {
      keepAliveTimeout: limits.idleTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: tickMs,
    },
    track,
  );
  // That sweep starts when the server emits 'listening'. This server never listens itself
  // (the sniffer owns the port), so without this event no request would ever time out.
  h1.emit("listening");

  let handing: net.Socket | undefined;
  const h2 = http2.createServer(h2ServerOptions(limits), track);
  h2.on("session", (session) => {
    sessions.add(session, handing);
    if (draining) session.close();
  });

  // noDelay: http.createServer would set it on the sockets it accepts; these come from
  // our own net.Server, so it is set here (Nagle would hold back small responses).
  const server = net.createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    pending.add(socket, socket);
    socket.once("close", () => sockets.delete(socket));
    sniff(socket, (isH2) => {
      if (isH2) {
        // Node emits 'session' within this call, which is how the session learns its socket.
        handing = socket;
        h2.emit("connection", socket);
        handing = undefined;
      } else {
        // From here Node's own headers and request deadlines apply.
        pending.settle(socket);
        h1.emit("connection", socket);
        socket.resume();
      }
    });
  });
  capConnections(server, limits, counters);

  const boundPort = await listenOn(server, port, host);
  sweep.start();

  return {
    port: boundPort,
    inflight: () => inflight.size,
    async drain(timeoutMs: number) {
      const deadline = Date.now() + timeoutMs;
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions.keys()) s.close();
      for (const res of inflight) {
        if ("setHeader" in res && !res.headersSent && !("stream" in res))
          res.setHeader("connection", "close");
      }
      h1.closeIdleConnections();
      if (inflight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          onIdle = resolve;
          timer = setTimeout(resolve, timeoutMs);
        });
        clearTimeout(timer);
      }
      // A session told to close (GOAWAY) closes by itself once its streams have ended and
      // their last frames (a gRPC status in trailers, say) are written; destroying it as soon
      // as the last response ended could cut those frames off. So the sessions get what is
      // left of the timeout to close by themselves.
      // (`closed` is already true: it says that close() was called, not that it is done.)
      const open = [...sessions.keys()].filter((s) => !s.destroyed);
      if (open.length > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(open.map((s) => new Promise((resolve) => s.once("close", resolve)))),
          new Promise((resolve) => {
            timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
          }),
        ]);
        clearTimeout(timer);
      }
      for (const s of sessions.keys()) s.destroy();
      for (const socket of sockets) socket.destroy();
      sweep.stop();
      // Stops Node's HTTP/1.1 deadline sweep; the server has no port of its own to close.
      h1.close();
      await closed;
    },
  };
}
