// Connections held by a hostile client, and what they cost Latchkey (PostgreSQL, both ports):
//   idle:    N idle sockets on each port: the server's RSS and heap before and while they are
//            held, verifyKey latency meanwhile, and how long until the idle timeout closed them.
//   streams: stalled HTTP/2 streams (HEADERS, never a body) on the main port and the gRPC port,
//            SESSIONS sessions x STREAMS each: how many the server took and refused, its memory
//            while they are held, and verifyKey latency meanwhile;
//   flood:   the same with FLOOD_SESSIONS sessions that each open 1,000 streams at once.
// Results go to bench/results/connections-<date>.json.
//
//   BENCH_IDLE_SOCKETS=5000     idle sockets per port
//   BENCH_IDLE_TIMEOUT_MS=60000 CONNECTION_IDLE_TIMEOUT_MS of the server (long enough that all
//                               sockets are open before the first is closed)
//   BENCH_SESSIONS=100          HTTP/2 sessions per port in the streams part
//   BENCH_STREAMS=100           streams each session opens (H2_MAX_CONCURRENT_STREAMS is 100)
//   BENCH_FLOOD_SESSIONS=10     sessions per port in the flood part
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { start, withDatabase } from "./lib.mjs";

const idleSockets = Number(process.env.BENCH_IDLE_SOCKETS ?? 5_000);
const idleTimeoutMs = Number(process.env.BENCH_IDLE_TIMEOUT_MS ?? 60_000);
const sessions = Number(process.env.BENCH_SESSIONS ?? 100);
const streamsPerSession = Number(process.env.BENCH_STREAMS ?? 100);
const floodSessions = Number(process.env.BENCH_FLOOD_SESSIONS ?? 10);
const results = new URL("./results/", import.meta.url).pathname;
mkdirSync(results, { recursive: true });
const rootKey = "bench_root_key_0123456789abcdef";
const MB = 1024 * 1024;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** RSS of the server process (from /proc) and its V8 heap in use (from its /metrics). */
async function memory(pid, base) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  const text = await (await fetch(`${base}/metrics`)).text();
  const heap = Number(/^latchkey_nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1]);
  return { rssMb: +(rssKb / 1024).toFixed(1), heapMb: +(heap / MB).toFixed(1) };
}

/** Memory once the server has caught up: RSS has not grown for a second (at most 20 s). */
async function settledMemory(pid, base) {
  const deadline = Date.now() + 20_000;
  let last = await memory(pid, base);
  while (Date.now() < deadline) {
    await sleep(1_000);
    const now = await memory(pid, base);
    if (now.rssMb <= last.rssMb) return now;
    last = now;
  }
  return last;
}

/** `n` sequential verifyKey calls on the /v2 JSON door: p50, p99 and max in ms. */
async function verifyLatency(base, key, n = 200) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${base}/v2/keys.verifyKey`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key }),
    });
    if (res.status === 200) await res.arrayBuffer();
    if (res.status !== 200)
      throw new Error(`verifyKey answered ${res.status}: ${await res.text()}`);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const at = (q) => +ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(2);
  return { p50: at(0.5), p99: at(0.99), max: +ms[ms.length - 1].toFixed(2) };
}

/** Connections the server holds open on a listener (`main` or `grpc`), from its /metrics. */
async function serverOpen(base, listener) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`^latchkey_connections_open\\{listener="${listener}"\\} (\\d+)`, "m").exec(
    text,
  );
  // Absent before the connection bounds existed: then there is nothing to wait for.
  return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
}

/**
 * Opens `n` idle sockets in batches; resolves to them and a count of those closed since.
 * Each batch waits until the server has accepted it: connects that outrun the accepts
 * overflow the listen queue and cost a SYN retransmit (a second) each.
 */
async function openIdle(base, listener, port, n) {
  const sockets = [];
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
    while ((await serverOpen(base, listener)) < target && Date.now() < deadline) await sleep(100);
  }
  return { sockets, closed: () => closed };
}

// --- raw HTTP/2: a client that opens streams and never sends their bodies ---
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
function frame(type, flags, streamId, payload = Buffer.alloc(0)) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}
/** HPACK literals without indexing; every name and value here is under 127 bytes. */
function headerBlock(headers) {
  const parts = [];
  for (const [name, value] of Object.entries(headers)) {
    parts.push(Buffer.from([0, name.length]), Buffer.from(name), Buffer.from([value.length]));
    parts.push(Buffer.from(value));
  }
  return Buffer.concat(parts);
}

/** One session that opens `n` streams at once; counts the server's refusals and GOAWAY. */
async function stalledSession(port, contentType, n) {
  const s = net.connect(port, "127.0.0.1");
  s.on("error", () => {});
  await new Promise((r) => s.once("connect", r));
  const state = { refused: 0, goaway: undefined, closed: false, socket: s };
  let buf = Buffer.alloc(0);
  s.on("data", (c) => {
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
      if (type === 4 && !ack) s.write(frame(4, 0x1, 0));
      if (type === 6 && !ack) s.write(frame(6, 0x1, 0, Buffer.from(payload)));
      buf = buf.subarray(9 + len);
    }
  });
  s.once("close", () => {
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
  const frames = [PREFACE, frame(4, 0, 0)];
  for (let i = 0; i < n; i++) frames.push(frame(1, 0x4, 2 * i + 1, block));
  s.write(Buffer.concat(frames));
  return state;
}

/** Streams the server took on a session: those before its GOAWAY (or all) less refused. */
function taken(state, n) {
  const last = state.goaway ?? 2 * n - 1;
  return Math.max(0, Math.min(n, (last + 1) / 2) - state.refused);
}

/** `n` sessions per port, each opening `perSession` stalled streams: taken, refused, memory. */
async function stalledStreams(pid, base, ports, key, n, perSession) {
  const before = await memory(pid, base);
  const states = { main: [], grpc: [] };
  for (let i = 0; i < n; i++) {
    states.main.push(await stalledSession(ports.main, "application/proto", perSession));
    states.grpc.push(await stalledSession(ports.grpc, "application/grpc", perSession));
  }
  const held = await settledMemory(pid, base);
  const latency = await verifyLatency(base, key);
  const summary = (list) => ({
    taken: list.reduce((t, st) => t + (st.closed ? 0 : taken(st, perSession)), 0),
    refused: list.reduce((t, st) => t + st.refused, 0),
    sessionsClosedByServer: list.filter((st) => st.closed || st.goaway !== undefined).length,
  });
  const result = {
    sessionsPerPort: n,
    streamsPerSession: perSession,
    memoryBefore: before,
    memoryHeld: held,
    main: summary(states.main),
    grpc: summary(states.grpc),
    verifyWhileHeld: latency,
  };
  for (const st of [...states.main, ...states.grpc]) st.socket.destroy();
  result.memoryAfter = await settledMemory(pid, base);
  return result;
}

async function run(databaseUrl) {
  const lk = await start(
    process.execPath,
    ["dist/src/cli/main.js", "serve"],
    {
      DATABASE_URL: databaseUrl,
      PORT: "0",
      GRPC_PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      ROOT_KEY: rootKey,
      CONNECTION_IDLE_TIMEOUT_MS: String(idleTimeoutMs),
      // Stalled streams stay for the whole measurement; the default would reset them at 30 s.
      REQUEST_TIMEOUT_MS: "120000",
    },
    /"port":(\d+),"grpcPort":(\d+)[^\n]*latchkey listening/,
  );
  const pid = lk.child.pid;
  const base = `http://127.0.0.1:${lk.match[1]}`;
  const ports = { main: Number(lk.match[1]), grpc: Number(lk.match[2]) };
  const auth = { authorization: `Bearer ${rootKey}`, "content-type": "application/json" };
  try {
    const call = async (procedure, body) => {
      const res = await fetch(`${base}/v2/${procedure}`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify(body),
      });
      const json = await res.json();
      if (res.status !== 200) throw new Error(`${procedure}: ${JSON.stringify(json)}`);
      return json.data;
    };
    const { apiId } = await call("apis.createApi", { name: "bench" });
    const { key } = await call("keys.createKey", { apiId });
    await verifyLatency(base, key, 500); // warm-up
    const out = { idleSockets, idleTimeoutMs, sessions, streamsPerSession };

    // Idle sockets.
    const before = await memory(pid, base);
    const quiet = await verifyLatency(base, key);
    const t0 = Date.now();
    const held = [
      await openIdle(base, "main", ports.main, idleSockets),
      await openIdle(base, "grpc", ports.grpc, idleSockets),
    ];
    const openedMs = Date.now() - t0;
    const whileHeld = await memory(pid, base);
    const stillOpen = held.reduce((n, h) => n + h.sockets.length - h.closed(), 0);
    const heldLatency = await verifyLatency(base, key);
    while (held.some((h) => h.closed() < h.sockets.length) && Date.now() - t0 < idleTimeoutMs * 3) {
      await sleep(50);
    }
    const allClosedMs = Date.now() - t0;
    const closed = held.reduce((n, h) => n + h.closed(), 0);
    for (const h of held) for (const s of h.sockets) s.destroy();
    await sleep(1_000);
    out.idle = {
      memoryBefore: before,
      memoryHeld: whileHeld,
      memoryAfter: await memory(pid, base),
      openedMs,
      openWhenMeasured: stillOpen,
      verifyQuiet: quiet,
      verifyWhileHeld: heldLatency,
      closedByServer: closed,
      of: 2 * idleSockets,
      allClosedAfterMs: allClosedMs,
    };
    console.log("idle", JSON.stringify(out.idle));

    // Stalled streams: sessions that keep to the stream cap, then sessions that flood past it.
    out.flood = await stalledStreams(pid, base, ports, key, floodSessions, 1_000);
    console.log("streams flood", JSON.stringify(out.flood));
    out.streams = await stalledStreams(pid, base, ports, key, sessions, streamsPerSession);
    console.log("streams held", JSON.stringify(out.streams));
    return out;
  } finally {
    await lk.stop();
  }
}

const out = await withDatabase("connections", run);
const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
writeFileSync(`${results}connections-${stamp}.json`, `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify(out, null, 2));
