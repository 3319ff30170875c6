import http2 from "node:http2";
import type net from "node:net";
import type { PendingConnections, Sweep } from "./connection-sweep.js";
import type { Inflight } from "./inflight.js";
import type { NodeResponse } from "./node-io.js";

/** Interval of HTTP/2 PINGs that detect dead peers (Node never sends its own). */
const H2_PING_INTERVAL_MS = 30_000;

/** What is kept of one HTTP/2 session, for its deadlines. */
export interface SessionState {
  /** The session's socket until its first request settles its headers deadline. */
  socket: net.Socket | undefined;
  /** Requests of the session whose responses have not completed. */
  open: number;
  /** Since when `open` has been 0. */
  idleSinceMs: number;
}

/**
 * The HTTP/2 sessions of the main port and their deadlines: a session with no request in
 * flight for `idleMs` is closed (GOAWAY), and destroyed at the next tick if it has not let
 * go; a request whose body has not all arrived `requestMs` after it started has its stream
 * reset (HTTP/1.1's are Node's). Checked at each tick of the port's sweep.
 */
export class H2Sessions {
  private readonly sessions = new Map<http2.ServerHttp2Session, SessionState>();

  constructor(
    private readonly sweep: Sweep,
    private readonly pending: PendingConnections<net.Socket>,
    private readonly idleMs: number,
    private readonly requestMs: number,
    inflight: Inflight<NodeResponse>,
  ) {
    sweep.add(() => {
      this.closeIdle();
      this.resetLate(inflight);
    });
  }

  /** Every session open now. */
  keys(): IterableIterator<http2.ServerHttp2Session> {
    return this.sessions.keys();
  }

  /** A new session on `socket`; it pings its peer and is forgotten when it closes. */
  add(session: http2.ServerHttp2Session, socket: net.Socket | undefined): void {
    this.sessions.set(session, { socket, open: 0, idleSinceMs: this.sweep.nowMs });
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
      this.sessions.delete(session);
    });
  }

  /** A request of the session of `res` started; returns its state for `requestDone`. */
  requestStarted(res: NodeResponse): SessionState | undefined {
    if (!("stream" in res)) return undefined;
    const state = this.sessions.get(res.stream.session as http2.ServerHttp2Session);
    if (!state) return undefined;
    state.open++;
    if (state.socket) {
      this.pending.settle(state.socket);
      state.socket = undefined;
    }
    return state;
  }

  /** A request of the session has completed its response. */
  requestDone(state: SessionState): void {
    if (--state.open === 0) state.idleSinceMs = this.sweep.nowMs;
  }

  private closeIdle(): void {
    const now = this.sweep.nowMs;
    for (const [session, state] of this.sessions) {
      if (state.open > 0 || now - state.idleSinceMs < this.idleMs) continue;
      if (session.closed) session.destroy();
      else session.close();
    }
  }

  private resetLate(inflight: Inflight<NodeResponse>): void {
    const now = this.sweep.nowMs;
    for (const entry of inflight.entries()) {
      if (now - entry.startMs < this.requestMs) continue;
      const res = entry.item;
      if ("stream" in res && !res.stream.readableEnded && !res.stream.closed) {
        res.stream.close(http2.constants.NGHTTP2_CANCEL);
      }
    }
  }
}
