import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
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
/** Interval of HTTP/2 PINGs that detect dead peers (Node never sends its own). */
const H2_PING_INTERVAL_MS = 30_000;

/**
 * Serves HTTP/1.1 and cleartext HTTP/2 on one port. HTTP/2 without TLS cannot be
 * negotiated, so each new connection is sniffed: bytes that start the HTTP/2 preface go
 * to the HTTP/2 server, anything else to the HTTP/1.1 server. Bytes may arrive one at a
 * time; the decision waits until they match or diverge from the preface.
 */
export async function listen(
  handler: RequestHandler,
  port: number,
  host: string,
): Promise<Listener> {
  let draining = false;
  const inflight = new Inflight<NodeResponse>();
  const sessions = new Set<http2.ServerHttp2Session>();
  const sockets = new Set<net.Socket>();

  let onIdle: (() => void) | undefined;

  const track: RequestHandler = (req, res) => {
    const entry = inflight.add(res);
    const done = () => {
      if (!inflight.remove(entry)) return;
      if (draining) {
        h1.closeIdleConnections();
        if (inflight.size === 0) onIdle?.();
      }
    };
    res.once("close", done);
    // An HTTP/2 response is complete when its side of the stream has ended, even if the
    // client has not finished sending (an oversized gRPC message, say).
    if ("stream" in res) res.stream.once("finish", done);
    if (draining && req.httpVersionMajor === 1) res.setHeader("connection", "close");
    handler(req, res);
  };

  const h1 = http.createServer(
    { keepAliveTimeout: 65_000, headersTimeout: 66_000, requestTimeout: 120_000 },
    track,
  );
  const h2 = http2.createServer({}, track);
  h2.on("session", (session) => {
    sessions.add(session);
    const ping = setInterval(() => {
      if (!session.closed && !session.destroyed) {
        session.ping((err) => {
          if (err) session.destroy();
        });
      }
    }, H2_PING_INTERVAL_MS);
    ping.unref();
    session.once("close", () => {
      clearInterval(ping);
      sessions.delete(session);
    });
    if (draining) session.close();
  });

  // noDelay: http.createServer would set it on the sockets it accepts; these come from
  // our own net.Server, so it is set here (Nagle would hold back small responses).
  const server = net.createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2 && n < H2_PREFACE.length) return;
      socket.off("data", onData);
      socket.pause();
      socket.unshift(seen);
      if (isH2) {
        // The HTTP/2 session reads the bytes already buffered, then owns the native handle;
        // resuming the JS stream here would steal its data.
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;

  return {
    port: address.port,
    inflight: () => inflight.size,
    async drain(timeoutMs: number) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.close();
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
      for (const s of sessions) s.destroy();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
