// Connections held by a hostile client and what they cost Latchkey (PostgreSQL, both ports):
//   idle     N idle sockets on each port: the server's memory while they are held, verifyKey
//            latency meanwhile, and how long until the idle timeout closed them all;
//   flood    sessions that each open 1,000 HTTP/2 streams at once (HEADERS, never a body);
//   streams  sessions that keep to the stream cap, each stream stalled the same way.
import net from "node:net";
import { call, metricsOf, verify } from "../lib/api.ts";
import { withDatabase } from "../lib/database.ts";
import { ms, num, table } from "../lib/markdown.ts";
import { memoryOf } from "../lib/proc.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { type Latchkey, withLatchkey } from "../lib/server.ts";
import { type LatencySummary, round, sleep, summarize } from "../lib/stats.ts";

export interface ConnectionsSettings {
  idleSockets: number;
  idleTimeoutMs: number;
  sessions: number;
  streamsPerSession: number;
  floodSessions: number;
}

interface Memory {
  rssMb: number;
  heapMb: number;
}

interface StreamsSummary {
  taken: number;
  refused: number;
  sessionsClosedByServer: number;
}

export interface StalledStreams {
  sessionsPerPort: number;
  streamsPerSession: number;
  memoryBefore: Memory;
  memoryHeld: Memory;
  memoryAfter: Memory;
  main: StreamsSummary;
  grpc: StreamsSummary;
  verifyWhileHeld: LatencySummary;
}

export interface ConnectionsResult {
  idle: {
    memoryBefore: Memory;
    memoryHeld: Memory;
    openedMs: number;
    openWhenMeasured: number;
    verifyQuiet: LatencySummary;
    verifyWhileHeld: LatencySummary;
    closedByServer: number;
    of: number;
    allClosedAfterMs: number;
  };
  flood: StalledStreams;
  streams: StalledStreams;
}

async function memory(lk: Latchkey): Promise<Memory> {
  const m = await metricsOf(lk.admin);
  return {
    rssMb: memoryOf(lk.pid).rssMb,
    heapMb: round((m.values.nodejs_heap_size_used_bytes ?? 0) / 2 ** 20, 1),
  };
}

/** Memory once the server has caught up: RSS has not grown for a second (20 s at most). */
async function settledMemory(lk: Latchkey): Promise<Memory> {
  const deadline = Date.now() + 20_000;
  let last = await memory(lk);
  while (Date.now() < deadline) {
    await sleep(1_000);
    const now = await memory(lk);
    if (now.rssMb <= last.rssMb) return now;
    last = now;
  }
  return last;
}

/** `n` verifyKey calls one after another on the /v2 door. */
async function verifyLatency(lk: Latchkey, key: string, n = 200): Promise<LatencySummary> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await verify(lk.base, key);
    times.push(performance.now() - t);
  }
  return summarize(times, 2);
}

async function serverOpen(lk: Latchkey, listener: string): Promise<number> {
  const text = await (await fetch(`${lk.admin}/metrics`)).text();
  const m = new RegExp(`^latchkey_connections_open\\{listener="${listener}"\\} (\\d+)`, "m").exec(
    text,
  );
  return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
}

/**
 * Opens `n` idle sockets in batches; each batch waits until the server has accepted it:
 * connects that outrun the accepts overflow the listen queue and cost a SYN retransmit each.
 */
async function openIdle(lk: Latchkey, listener: string, port: number, n: number) {
  const sockets: net.Socket[] = [];
  let closed = 0;
  for (let i = 0; i < n; i += 250) {
    const batch = Array.from({ length: Math.min(250, n - i) }, () => {
      const s = net.connect(port, "127.0.0.1");
      s.on("error", () => {});
      s.once("close", () => closed++);
      s.resume();
      sockets.push(s);
      return new Promise((r) => {
        s.once("connect", r);
        s.once("close", r);
      });
    });
    await Promise.all(batch);
    const target = sockets.length - closed;
    const deadline = Date.now() + 10_000;
    while ((await serverOpen(lk, listener)) < target && Date.now() < deadline) await sleep(100);
  }
  return { sockets, closed: () => closed };
}

// Raw HTTP/2: a client that opens streams and never sends their bodies.
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK literals without indexing; every name and value here is under 127 bytes. */
function headerBlock(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    parts.push(
      Buffer.from([0, name.length]),
      Buffer.from(name),
      Buffer.from([value.length]),
      Buffer.from(value),
    );
  }
  return Buffer.concat(parts);
}

interface SessionState {
  refused: number;
  goaway: number | undefined;
  closed: boolean;
  socket: net.Socket;
}

/** One session that opens `n` streams at once; counts the server's refusals and GOAWAY. */
async function stalledSession(port: number, contentType: string, n: number): Promise<SessionState> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  await new Promise((r) => socket.once("connect", r));
  const state: SessionState = { refused: 0, goaway: undefined, closed: false, socket };
  let buf = Buffer.alloc(0);
  socket.on("data", (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    while (buf.length >= 9) {
      const len = buf.readUIntBE(0, 3);
      if (buf.length < 9 + len) break;
      const type = buf.readUInt8(3);
      const payload = buf.subarray(9, 9 + len);
      if (type === 3 && payload.readUInt32BE(0) === 7) state.refused++;
      if (type === 7) state.goaway = payload.readUInt32BE(0) & 0x7fffffff;
      // Acknowledge SETTINGS and PINGs, as a client that means to keep its session would.
      const ack = (buf.readUInt8(4) & 0x1) === 1;
      if (type === 4 && !ack) socket.write(frame(4, 0x1, 0));
      if (type === 6 && !ack) socket.write(frame(6, 0x1, 0, Buffer.from(payload)));
      buf = buf.subarray(9 + len);
    }
  });
  socket.once("close", () => {
    state.closed = true;
  });
  const block = headerBlock({
    ":method": "POST",
    ":scheme": "http",
    ":authority": "localhost",
    ":path": "/latchkey.v2.KeysService/VerifyKey",
    "content-type": contentType,
    te: "trailers",
  });
  const frames: Buffer[] = [PREFACE, frame(4, 0, 0)];
  for (let i = 0; i < n; i++) frames.push(frame(1, 0x4, 2 * i + 1, block));
  socket.write(Buffer.concat(frames));
  return state;
}

/** Streams the server took on a session: those before its GOAWAY (or all), less refused. */
function taken(state: SessionState, n: number): number {
  const last = state.goaway ?? 2 * n - 1;
  return Math.max(0, Math.min(n, (last + 1) / 2) - state.refused);
}

async function stalledStreams(
  lk: Latchkey,
  key: string,
  n: number,
  perSession: number,
): Promise<StalledStreams> {
  const memoryBefore = await memory(lk);
  const states = { main: [] as SessionState[], grpc: [] as SessionState[] };
  for (let i = 0; i < n; i++) {
    states.main.push(await stalledSession(lk.port, "application/proto", perSession));
    states.grpc.push(await stalledSession(lk.grpcPort ?? 0, "application/grpc", perSession));
  }
  const memoryHeld = await settledMemory(lk);
  const verifyWhileHeld = await verifyLatency(lk, key);
  const summary = (list: SessionState[]): StreamsSummary => ({
    taken: list.reduce((t, st) => t + (st.closed ? 0 : taken(st, perSession)), 0),
    refused: list.reduce((t, st) => t + st.refused, 0),
    sessionsClosedByServer: list.filter((st) => st.closed || st.goaway !== undefined).length,
  });
  const main = summary(states.main);
  const grpc = summary(states.grpc);
  for (const st of [...states.main, ...states.grpc]) st.socket.destroy();
  const memoryAfter = await settledMemory(lk);
  return {
    sessionsPerPort: n,
    streamsPerSession: perSession,
    memoryBefore,
    memoryHeld,
    memoryAfter,
    main,
    grpc,
    verifyWhileHeld,
  };
}

async function idle(lk: Latchkey, key: string, s: ConnectionsSettings) {
  const memoryBefore = await memory(lk);
  const verifyQuiet = await verifyLatency(lk, key);
  const t0 = Date.now();
  const held = [
    await openIdle(lk, "main", lk.port, s.idleSockets),
    await openIdle(lk, "grpc", lk.grpcPort ?? 0, s.idleSockets),
  ];
  const openedMs = Date.now() - t0;
  const memoryHeld = await memory(lk);
  const openWhenMeasured = held.reduce((n, h) => n + h.sockets.length - h.closed(), 0);
  const verifyWhileHeld = await verifyLatency(lk, key);
  while (held.some((h) => h.closed() < h.sockets.length) && Date.now() - t0 < s.idleTimeoutMs * 3) {
    await sleep(50);
  }
  const allClosedAfterMs = Date.now() - t0;
  const closedByServer = held.reduce((n, h) => n + h.closed(), 0);
  for (const h of held) for (const socket of h.sockets) socket.destroy();
  return {
    memoryBefore,
    memoryHeld,
    openedMs,
    openWhenMeasured,
    verifyQuiet,
    verifyWhileHeld,
    closedByServer,
    of: 2 * s.idleSockets,
    allClosedAfterMs,
  };
}

export default defineScenario<ConnectionsSettings, ConnectionsResult>({
  name: "connections",
  description: "idle sockets and stalled HTTP/2 streams held by a hostile client (PostgreSQL)",
  settings: ({ quick, args }) => {
    noArgs("connections", args);
    return {
      idleSockets: setting("BENCH_IDLE_SOCKETS", 5_000, 500, quick),
      // Long enough that every socket is open before the first is closed.
      idleTimeoutMs: setting("BENCH_IDLE_TIMEOUT_MS", 60_000, 10_000, quick),
      sessions: setting("BENCH_SESSIONS", 100, 10, quick),
      streamsPerSession: setting("BENCH_STREAMS", 100, 100, quick),
      floodSessions: setting("BENCH_FLOOD_SESSIONS", 10, 2, quick),
    };
  },
  run: ({ settings: s }) =>
    withDatabase("connections", (db) =>
      withLatchkey(
        {
          databaseUrl: db.url,
          grpc: true,
          // Stalled streams stay for the whole measurement; the default would reset them at 30 s.
          env: {
            CONNECTION_IDLE_TIMEOUT_MS: String(s.idleTimeoutMs),
            REQUEST_TIMEOUT_MS: "120000",
          },
        },
        async (lk) => {
          const { apiId } = await call(lk.base, "apis.createApi", { name: "bench" });
          const { key } = await call(lk.base, "keys.createKey", { apiId });
          await verifyLatency(lk, key, 500); // warm-up
          const idleResult = await idle(lk, key, s);
          console.log("idle", JSON.stringify(idleResult));
          const flood = await stalledStreams(lk, key, s.floodSessions, 1_000);
          console.log("flood", JSON.stringify(flood));
          const streams = await stalledStreams(lk, key, s.sessions, s.streamsPerSession);
          console.log("streams", JSON.stringify(streams));
          return { idle: idleResult, flood, streams };
        },
      ),
    ),
  render(r) {
    const i = r.idle;
    const row = (label: string, x: StalledStreams) => [
      label,
      `${num(x.main.taken + x.grpc.taken, 0)} taken, ${num(x.main.refused + x.grpc.refused, 0)} refused`,
      `+${num(x.memoryHeld.rssMb - x.memoryBefore.rssMb, 0)} MB`,
      `${ms(x.verifyWhileHeld.p50Ms)} / ${ms(x.verifyWhileHeld.p99Ms)}`,
    ];
    return [
      table(
        ["held", "what the server did", "RSS while held:", "verifyKey meanwhile, p50 / p99:"],
        [
          [
            `${num(i.of / 2, 0)} idle sockets per port`,
            `${num(i.closedByServer, 0)} of ${num(i.of, 0)} closed by the idle timeout after ${num(i.allClosedAfterMs / 1000, 1)} s`,
            `+${num(i.memoryHeld.rssMb - i.memoryBefore.rssMb, 0)} MB`,
            `${ms(i.verifyWhileHeld.p50Ms)} / ${ms(i.verifyWhileHeld.p99Ms)} (alone ${ms(i.verifyQuiet.p50Ms)} / ${ms(i.verifyQuiet.p99Ms)})`,
          ],
          row(`${r.flood.sessionsPerPort} sessions per port, 1,000 stalled streams each`, r.flood),
          row(
            `${r.streams.sessionsPerPort} sessions per port, ${r.streams.streamsPerSession} stalled streams each`,
            r.streams,
          ),
        ],
      ),
    ].join("\n\n");
  },
});
