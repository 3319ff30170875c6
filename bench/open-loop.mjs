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
// Every answer is checked: HTTP 200 and `data.code` counted by value.
//
//   node bench/open-loop.mjs '<json config>'   prints one JSON line with the results
import { spawn } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";

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

function client(config) {
  const u = new URL(config.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.maxSockets ?? 256 });
  const headers = { "content-type": "application/json", ...(config.headers ?? {}) };
  const codes = {};
  const counts = { ok: 0, non2xx: 0, errors: 0, unexpected: 0 };
  const keys = config.keys;
  const bodyOf = (i) => (keys ? `{"key":"${keys.prefix}${i}"}` : config.body);
  /** Sends one request; `done(ok)` runs once when it is answered or failed. */
  function send(i, done) {
    const body = bodyOf(i);
    const req = http.request(
      {
        agent,
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: "POST",
        headers: { ...headers, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          if (res.statusCode !== 200) {
            counts.non2xx++;
            return done(false);
          }
          const text = Buffer.concat(chunks).toString("latin1");
          const m = /"code":"([A-Z_]+)"/.exec(text);
          const code = m ? m[1] : "?";
          codes[code] = (codes[code] ?? 0) + 1;
          if (config.expectCode && code !== config.expectCode) counts.unexpected++;
          counts.ok++;
          done(true);
        });
        res.on("error", () => {
          counts.errors++;
          done(false);
        });
      },
    );
    req.on("error", () => {
      counts.errors++;
      done(false);
    });
    req.end(body);
  }
  return { agent, send, codes, counts };
}

/** Open loop: `rate` req/s for `warmupSeconds` (not recorded) then `seconds`. */
export function runOpen(config) {
  const { rate, seconds, warmupSeconds = 3, drainMs = 30_000 } = config;
  const c = client(config);
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
      c.agent.destroy();
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
    c.agent.destroy();
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

/**
 * Runs this file as a separate process (pinned to `cpu` with taskset when given) and
 * resolves with its JSON result. `timeoutMs` bounds the run.
 */
export function spawnLoad(config, { cpu, timeoutMs = 30 * 60_000 } = {}) {
  const self = fileURLToPath(import.meta.url);
  const [bin, args] =
    cpu === undefined
      ? [process.execPath, [self, JSON.stringify(config)]]
      : ["taskset", ["-c", String(cpu), process.execPath, self, JSON.stringify(config)]];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "inherit"] });
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

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const config = JSON.parse(process.argv[2] ?? "{}");
  const r = await (config.mode === "closed" ? runClosed(config) : runOpen(config));
  console.log(JSON.stringify(r));
}
