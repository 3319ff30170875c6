import type net from "node:net";

/**
 * One interval timer per listening port and a coarse clock. Deadlines of connections and
 * requests are checked here, a few times per shortest timeout, instead of with a timer per
 * connection or per request: arming and clearing a timer for every call would cost the
 * verification path more than walking the few entries that are open at each tick.
 */
export class Sweep {
  /** Date.now() as of the last tick: what entries stamp, with no clock read per request. */
  nowMs = Date.now();
  private readonly checks: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs: number) {}

  /** Runs `check` at every tick, after the clock is read. */
  add(check: () => void): void {
    this.checks.push(check);
  }

  start(): void {
    this.timer ??= setInterval(() => {
      this.nowMs = Date.now();
      for (const check of this.checks) check();
    }, this.intervalMs);
    // Deadlines never keep a stopping process alive.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The tick of a sweep: a quarter of the shortest timeout, from 50 ms to 1 s. */
export function sweepIntervalMs(...timeoutsMs: number[]): number {
  return Math.max(50, Math.min(1_000, Math.floor(Math.min(...timeoutsMs) / 4)));
}

interface Pending {
  socket: net.Socket;
  acceptedMs: number;
  /** When the sweep first saw a byte from it (undefined: nothing read yet). */
  firstByteMs: number | undefined;
}

/**
 * Connections that have not started their first request yet. One that sends nothing is
 * idle and is destroyed after `idleMs`; one that has sent something must complete the
 * headers of its first request (HTTP/2: the preface and the first HEADERS) within
 * `headersMs` of that first byte. Bytes are read from the socket's counter, which the
 * native HTTP/2 reader keeps too, so this works on sockets whose data JS never sees.
 */
export class PendingConnections<K> {
  private readonly entries = new Map<K, Pending>();

  constructor(
    private readonly sweep: Sweep,
    private readonly idleMs: number,
    private readonly headersMs: number,
  ) {
    sweep.add(() => this.check());
  }

  get size(): number {
    return this.entries.size;
  }

  /** Starts the clock of a new connection; it is forgotten when it closes. */
  add(key: K, socket: net.Socket): void {
    this.entries.set(key, { socket, acceptedMs: this.sweep.nowMs, firstByteMs: undefined });
    socket.once("close", () => this.entries.delete(key));
  }

  /** The connection's first request has its headers: other deadlines take over. */
  settle(key: K): void {
    this.entries.delete(key);
  }

  private check(): void {
    const now = this.sweep.nowMs;
    for (const [key, p] of this.entries) {
      if (p.socket.bytesRead === 0) {
        if (now - p.acceptedMs < this.idleMs) continue;
      } else {
        p.firstByteMs ??= now;
        if (now - p.firstByteMs < this.headersMs) continue;
      }
      this.entries.delete(key);
      p.socket.destroy();
    }
  }
}
