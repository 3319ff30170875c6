import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import {
  type ConnectionCounters,
  type ConnectionLimits,
  capConnections,
  H2_MAX_SESSION_MEMORY_MB,
  listenOn,
} from "./connection-limits.js";
import { PendingConnections, Sweep, sweepIntervalMs } from "./connection-sweep.js";
import { Inflight } from "./inflight.js";

/** The gRPC port: grpc-js serves the connections that this listener accepts and bounds. */
export interface GrpcListener {
  readonly port: number;
  /** Stops accepting; resolves once every connection has closed. */
  stopAccepting(): Promise<void>;
  /** Destroys every connection still open and stops the deadlines. */
  destroy(): void;
}

/** The bounds of the gRPC port: options for grpc-js, and the listener that applies the rest. */
export interface GrpcConnections {
  /**
   * grpc-js options that bound its sessions: the stream cap, session memory (grpc-js turns
   * Node's bound off unless it is given), the idle deadline (grpc-js counts it from the
   * moment a session has no call open) and the interceptor of the call deadlines. The
   * header list keeps Node's bound (64 KiB), which grpc-js leaves as it is.
   */
  serverOptions: grpc.ServerOptions;
  /** Listens on `port` and hands each connection accepted to `server`. */
  listen(server: grpc.Server, port: number, host: string): Promise<GrpcListener>;
}

/** The key grpc-js's `getPeer()` gives the calls of a socket. */
function peerOf(socket: net.Socket): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}

/**
 * The interceptor of the gRPC port's call deadlines: a call's first HEADERS settles its
 * connection's headers deadline, and a call whose request (message and end of stream) has
 * not arrived `requestTimeoutMs` after it started ends with DEADLINE_EXCEEDED. Per call:
 * one list entry, removed when the request has arrived or the call has ended.
 */
function callDeadlines(
  sweep: Sweep,
  pending: PendingConnections<string>,
  requestTimeoutMs: number,
): grpc.ServerInterceptor {
  const calls = new Inflight<grpc.ServerInterceptingCallInterface>();
  sweep.add(() => {
    for (const entry of calls.entries()) {
      if (sweep.nowMs - entry.startMs < requestTimeoutMs) continue;
      calls.remove(entry);
      entry.item.sendStatus({
        code: grpc.status.DEADLINE_EXCEEDED,
        details: `the request did not arrive whole within ${requestTimeoutMs} ms`,
      });
    }
  });

  return (_method, call) => {
    let entry: ReturnType<typeof calls.add> | undefined;
    const settle = () => {
      if (entry) calls.remove(entry);
      entry = undefined;
    };
    return new grpc.ServerInterceptingCall(call, {
      start(next) {
        entry = calls.add(call, sweep.nowMs);
        if (pending.size > 0) pending.settle(call.getPeer());
        next({
          onReceiveHalfClose(nextHalfClose) {
            settle();
            nextHalfClose();
          },
          onCancel: settle,
        });
      },
      sendStatus(status, next) {
        settle();
        next(status);
      },
    });
  };
}

/**
 * Listens for the gRPC port on a net.Server of our own and hands each connection to
 * grpc-js through its connection injector, so that the port has the same bounds as the
 * main one: at most `maxConnections`, a connection silent before its first call closed
 * after `idleTimeoutMs`, the preface and first call's headers within `headersTimeoutMs` of
 * the first byte, and every call's request (message and end of stream) within
 * `requestTimeoutMs` of its start, else the call ends with DEADLINE_EXCEEDED.
 * The server must be created with `serverOptions`.
 */
export function grpcConnections(
  limits: ConnectionLimits,
  counters: ConnectionCounters,
): GrpcConnections {
  const sweep = new Sweep(sweepIntervalMs(limits.idleTimeoutMs, limits.headersTimeoutMs));
  const pending = new PendingConnections<string>(
    sweep,
    limits.idleTimeoutMs,
    limits.headersTimeoutMs,
  );
  const interceptor = callDeadlines(sweep, pending, limits.requestTimeoutMs);

  const listen = async (server: grpc.Server, port: number, host: string): Promise<GrpcListener> => {
    const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
    const sockets = new Set<net.Socket>();
    const tcp = net.createServer({ noDelay: true }, (socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      pending.add(peerOf(socket), socket);
      injector.injectConnection(socket);
    });
    capConnections(tcp, limits, counters);
    const boundPort = await listenOn(tcp, port, host);
    sweep.start();
    return {
      port: boundPort,
      stopAccepting: () => new Promise<void>((resolve) => tcp.close(() => resolve())),
      destroy() {
        for (const socket of sockets) socket.destroy();
        sweep.stop();
      },
    };
  };
  return {
    serverOptions: {
      "grpc.max_concurrent_streams": limits.h2MaxConcurrentStreams,
      "grpc-node.max_session_memory": H2_MAX_SESSION_MEMORY_MB,
      "grpc.max_connection_idle_ms": limits.idleTimeoutMs,
      interceptors: [interceptor],
    },
    listen,
  };
}
