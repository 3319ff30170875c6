// A load generator for keys.verifyKey on the /v2 JSON door, run as a process of its own (so it
// can be pinned to a core with taskset). Two modes:
//
//   open    requests leave on a fixed schedule (`rate` per second) whatever the answers, over
//           keep-alive connections (up to `maxSockets`); each latency is measured from the
//           request's SCHEDULED send time, so a stall of the server (or of this generator)
//           shows in the latencies instead of silently lowering the rate (coordinated omission).
//   closed  `concurrency` workers send one request after another (max rate), for `total`
//           requests: used to walk many distinct keys.
//
// The body is `body` (fixed) or {"key": `${keys.prefix}${i}`} with i random in
// [keys.from, keys.from + keys.count) (open) or each i of that range once, in order (closed).
// Every answer is checked: HTTP 200 and `data.code` counted by value. With `grpc` ({ body:
// base64 of one length-prefixed message }), `url` is a gRPC port and method path instead, the
// requests go as streams of one HTTP/2 connection (bench/open-loop-grpc.mjs), codes by grpc-status.
//
//   node bench/open-loop.mjs '<json config>'   prints one JSON line with the results
//   node bench/open-loop.mjs spin <seconds>     the spinning side of preemptionProbe
import { spawn } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { grpcClient } from "./open-loop-grpc.mjs";
import { processUsage } from "./proc.mjs";

const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** Percentiles (ms) of the first `n` values of a Float64Array (sorted in place). */
function percentiles(values, n) {
  const xs = values.subarray(0, n).sort();
  const at = (p) => (n === 0 ? null : round(xs[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)]));
  return {
    p50Ms: at(50),
    p90Ms: at(90),
    p99Ms: at(99),
    p999Ms: at(99.9),
    maxMs: n === 0 ? null : round(xs[n - 1]),
  };
}

/**
 * A lean HTTP/1.1 client on raw keep-alive sockets, one request at a time per socket (no
 * pipelining). The generator must cost far less than the server it measures, or its own
 * garbage collections and event-loop turns show up as the server's latency: Node's
 * http.request allocates a ClientRequest, an IncomingMessage and header objects per call.
 * Here a request is one preformatted buffer and an answer is parsed in place (status line,
 * Content-Length, body).
 */
function client(config) {
  const u = new URL(config.url);
  const port = Number(u.port || 80);
  let head = `POST ${u.pathname} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\n`;
  for (const [name, value] of Object.entries(config.headers ?? {})) head += `${name}: ${value}\r\n`;
  const encode = (body) =>
    Buffer.from(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  const fixed = config.body === undefined ? null : encode(config.body);
  const keys = config.keys;
  const requestOf = (i) => fixed ?? encode(`{"key":"${keys.prefix}${i}"}`);
  const maxSockets = config.maxSockets ?? 256;
  const codes = {};
  const counts = { ok: 0, non2xx: 0, errors: 0, unexpected: 0 };
  const idle = [];
  const queue = [];
  const sockets = new Set();

  function answer(conn, status, body) {
    const done = conn.done;
    conn.done = null;
    if (status !== 200) {
      counts.non2xx++;
    } else {
      const m = /"code":"([A-Z_]+)"/.exec(body);
      const code = m ? m[1] : "?";
      codes[code] = (codes[code] ?? 0) + 1;
      if (config.expectCode && code !== config.expectCode) counts.unexpected++;
      counts.ok++;
    }
    release(conn);
    done(status === 200);
  }

  /** Parses every whole answer in `conn.buf`; keeps a partial one for the next chunk. */
  function onData(conn, chunk) {
    let buf = conn.buf === null ? chunk : Buffer.concat([conn.buf, chunk]);
    conn.buf = null;
    for (;;) {
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) break;
      const headText = buf.latin1Slice(0, end).toLowerCase();
      const status = Number(headText.slice(9, 12));
      const at = headText.indexOf("\r\ncontent-length:");
      if (at < 0) return fail(conn); // every server measured here sends Content-Length
      const length = Number.parseInt(headText.slice(at + 17), 10);
      if (buf.length < end + 4 + length) break;
      const body = buf.latin1Slice(end + 4, end + 4 + length);
      buf = buf.subarray(end + 4 + length);
      if (conn.done === null) return fail(conn); // an answer nobody asked for
      answer(conn, status, body);
      if (buf.length === 0) return;
    }
    conn.buf = buf;
  }

  /** Drops a broken connection (once: "error" is followed by "close"), failing its request. */
  function fail(conn) {
    if (!sockets.delete(conn)) return;
    const i = idle.indexOf(conn);
    if (i >= 0) idle.splice(i, 1);
    conn.socket.destroy();
    if (conn.done !== null) {
      const done = conn.done;
      conn.done = null;
      counts.errors++;
      done(false);
    }
    const next = queue.shift();
    if (next !== undefined) send(next.i, next.done);
  }

  function connect() {
    const conn = { socket: null, done: null, buf: null };
    conn.socket = net.connect({ host: u.hostname, port, noDelay: true });
    conn.socket.on("data", (chunk) => onData(conn, chunk));
    conn.socket.on("error", () => fail(conn));
    conn.socket.on("close", () => fail(conn));
    sockets.add(conn);
    return conn;
  }

  function release(conn) {
    const next = queue.shift();
    if (next === undefined) idle.push(conn);
    else write(conn, next.i, next.done);
  }

  function write(conn, i, done) {
    conn.done = done;
    conn.socket.write(requestOf(i));
  }

  /** Sends one request; `done(ok)` runs once when it is answered or failed. */
  function send(i, done) {
    const conn = idle.pop() ?? (sockets.size < maxSockets ? connect() : undefined);
    if (conn === undefined) queue.push({ i, done });
    else write(conn, i, done);
  }

  function destroy() {
    for (const conn of sockets) conn.socket.destroy();
  }
  return { send, destroy, codes, counts };
}

/** Open loop: `rate` req/s for `warmupSeconds` (not recorded) then `seconds`. */
export function runOpen(config) {
  const { rate, seconds, warmupSeconds = 3, drainMs = 30_000 } = config;
  const c = config.grpc ? grpcClient(config) : client(config);
  const interval = 1000 / rate;
  const warm = Math.round(rate * warmupSeconds);
  const total = warm + Math.round(rate * seconds);
  const lat = new Float64Array(total - warm);
  const lag = new Float64Array(total - warm);
  const keys = config.keys;
  const pick = () => (keys ? keys.from + Math.floor(Math.random() * keys.count) : 0);
  let recorded = 0;
  let answered = 0;
  let failed = 0;
  let sent = 0;
  let maxInFlight = 0;
  let inFlight = 0;
  let measureStart = 0;
  let measureEnd = 0;
  return new Promise((resolve) => {
    const t0 = performance.now() + 20;
    const finish = () => {
      clearTimeout(guard);
      c.destroy();
      const measuredSent = total - warm;
      resolve({
        mode: "open",
        targetRate: rate,
        seconds,
        warmupSeconds,
        sent: measuredSent,
        answered: recorded,
        lost: measuredSent - recorded,
        achievedRate: Math.round(recorded / ((measureEnd - measureStart) / 1000)),
        ...percentiles(lat, recorded),
        sendLag: percentiles(lag, Math.max(0, Math.min(sent - warm, lag.length))),
        maxInFlight,
        sockets: config.maxSockets ?? 256,
        non2xx: c.counts.non2xx,
        errors: c.counts.errors,
        unexpectedCodes: c.counts.unexpected,
        codes: c.codes,
        failedAll: failed,
      });
    };
    let guard;
    const onDone = (i, scheduled) => (ok) => {
      const now = performance.now();
      inFlight--;
      answered++;
      if (!ok) failed++;
      if (i >= warm && ok) {
        lat[recorded++] = now - scheduled;
        measureEnd = now;
      }
      if (answered === total) finish();
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && t0 + sent * interval <= now) {
        const scheduled = t0 + sent * interval;
        if (sent === warm) measureStart = scheduled;
        if (sent >= warm) lag[sent - warm] = now - scheduled;
        inFlight++;
        if (inFlight > maxInFlight) maxInFlight = inFlight;
        c.send(pick(), onDone(sent, scheduled));
        sent++;
      }
      if (sent < total) setImmediate(tick);
      else guard = setTimeout(finish, drainMs);
    };
    setTimeout(tick, Math.max(0, t0 - performance.now()));
  });
}

/** Closed loop: `concurrency` workers over keys [keys.from, keys.from + total). */
export function runClosed(config) {
  const { concurrency = 64, total } = config;
  const c = client(config);
  const from = config.keys?.from ?? 0;
  let next = 0;
  const t0 = performance.now();
  const worker = () =>
    new Promise((resolve) => {
      const step = () => {
        if (next >= total) return resolve();
        const i = from + next++;
        c.send(i, step);
      };
      step();
    });
  return Promise.all(Array.from({ length: concurrency }, worker)).then(() => {
    const ms = performance.now() - t0;
    c.destroy();
    return {
      mode: "closed",
      concurrency,
      requests: total,
      seconds: round(ms / 1000, 1),
      rps: Math.round(total / (ms / 1000)),
      non2xx: c.counts.non2xx,
      errors: c.counts.errors,
      unexpectedCodes: c.counts.unexpected,
      codes: c.codes,
    };
  });
}

/** Runs the load of `config` as a process of its own (see runSelf) and resolves with its result. */
export function spawnLoad(config, { cpu, timeoutMs = 30 * 60_000 } = {}) {
  return runSelf([JSON.stringify(config)], { cpu, timeoutMs });
}

/**
 * Runs this file with `args` as a process of its own, pinned to `cpu` with taskset when given,
 * and resolves with the JSON of its last line of output. `timeoutMs` bounds the run.
 */
function runSelf(args, { cpu, timeoutMs = 30 * 60_000 } = {}) {
  const node = [process.execPath, fileURLToPath(import.meta.url), ...args];
  const [bin, argv] =
    cpu === undefined ? [node[0], node.slice(1)] : ["taskset", ["-c", String(cpu), ...node]];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      const line = out.trim().split("\n").at(-1);
      if (code !== 0 || !line) return reject(new Error(`open-loop exited with ${code}: ${out}`));
      resolve(JSON.parse(line));
    });
  });
}

/**
 * `spawnLoad` against the server process `pid`, adding what the server spent: CPU time per
 * request (warm-up included, as the CPU counters are) and how often the kernel took its core
 * away (involuntary context switches). At a fixed rate the CPU per request compares two
 * servers without the load generator's share of the machine in the figure.
 */
export async function spawnLoadOn(pid, config, options) {
  const before = processUsage(pid);
  const r = await spawnLoad(config, options);
  const after = processUsage(pid);
  const requests = r.sent + Math.round(config.rate * (config.warmupSeconds ?? 3));
  return {
    ...r,
    server: {
      cpuUsPerRequest: Math.round((1000 * (after.cpuMs - before.cpuMs)) / requests),
      involuntarySwitches: after.preempted - before.preempted,
    },
  };
}

/**
 * What this machine itself does to a busy core: a process spinning on `cpu` (while another
 * spins on `other`, as the generator does) for `seconds`, counting the gaps between two reads
 * of the clock, which are the times the kernel ran something else on that core.
 */
export async function preemptionProbe({ cpu = 0, other = 1, seconds = 10 } = {}) {
  const run = (core) => runSelf(["spin", String(seconds)], { cpu: core });
  const [probe] = await Promise.all([run(cpu), run(other)]);
  return { cpu, ...probe };
}

/** The spinning side of preemptionProbe. */
function spin(seconds) {
  const over = { 0.5: 0, 1: 0, 2: 0, 5: 0 };
  let lostMs = 0;
  let maxMs = 0;
  const end = performance.now() + seconds * 1000;
  for (let last = performance.now(); last < end; ) {
    const now = performance.now();
    const gap = now - last;
    if (gap > 0.5) {
      lostMs += gap;
      maxMs = Math.max(maxMs, gap);
      for (const k of Object.keys(over)) if (gap > Number(k)) over[k]++;
    }
    last = now;
  }
  return { seconds, gapsOverMs: over, lostMs: round(lostMs, 1), maxGapMs: round(maxMs) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === "spin") console.log(JSON.stringify(spin(Number(process.argv[3]))));
  else {
    const config = JSON.parse(process.argv[2] ?? "{}");
    const r = await (config.mode === "closed" ? runClosed(config) : runOpen(config));
    console.log(JSON.stringify(r));
  }
}
