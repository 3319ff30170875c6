// Helpers of the benchmarks: start servers, run autocannon and h2load, read CPU profiles.

import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import autocannon from "autocannon";

/** The runtimes to compare: the machine's Node and, when installed, Node 24 from npm. */
export function runtimes() {
  const out = [];
  const system = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !dir.includes("node_modules"))
    .map((dir) => join(dir, "node"))
    .find((p) => existsSync(p));
  if (system) out.push(system);
  const npmNode = new URL("../node_modules/node/bin/node", import.meta.url).pathname;
  if (existsSync(npmNode)) out.push(npmNode);
  return out.map((bin) => ({ bin, version: versionOf(bin) }));
}

function versionOf(bin) {
  return new Promise((resolve) => execFile(bin, ["-v"], (_, stdout) => resolve(stdout.trim())));
}

/** Spawns a process and resolves once a stdout line matches `ready` (its match is returned). */
export function start(bin, args, env, ready, timeoutMs = 60_000) {
  const child = spawn(bin, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`not ready in ${timeoutMs} ms: ${args.join(" ")}\n${out}`));
    }, timeoutMs);
    const onData = (c) => {
      out += c;
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.off("data", onData);
        child.stdout.resume();
        resolve({ child, match: m, stop: () => stopChild(child) });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (c) => {
      out += c;
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${args.join(" ")}\n${out}`));
    });
  });
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * autocannon: closed loop, `connections` keep-alive connections, `seconds` after a warm-up.
 * The counts (non-2xx, errors, 2xx answers and, with `verifyBody`, answers it refused) cover
 * the warm-up too, so that they account for every request sent.
 */
export async function loadHttp({
  url,
  body,
  headers,
  connections = 50,
  seconds = 10,
  warmupSeconds = 2,
  verifyBody,
}) {
  const opts = {
    url,
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
    connections,
    ...(verifyBody ? { verifyBody } : {}),
  };
  const warm = await autocannon({ ...opts, duration: warmupSeconds });
  const r = await autocannon({ ...opts, duration: seconds });
  return {
    tool: "autocannon",
    connections,
    seconds,
    rps: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx + warm.non2xx,
    errors: r.errors + warm.errors,
    answered2xx: r["2xx"] + warm["2xx"],
    ...(verifyBody ? { notValid: r.mismatches + warm.mismatches } : {}),
  };
}

/**
 * Runs h2load for `seconds` after a warm-up with a request body from a file; returns the
 * parsed summary. HTTP/1.1 (`--h1`) or HTTP/2 with `streams` concurrent streams per client.
 */
function h2load({ url, bodyFile, headers, clients, streams, seconds, warmupSeconds, h1 }) {
  const args = [...(h1 ? ["--h1"] : ["-m", String(streams)]), "-c", String(clients)];
  args.push("-D", String(seconds), `--warm-up-time=${warmupSeconds}`, "-d", bodyFile);
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  args.push(url);
  return new Promise((resolve, reject) =>
    execFile("h2load", args, { maxBuffer: 1 << 24 }, (err, stdout) => {
      if (err) {
        return reject(
          new Error(`h2load failed (apt-get install nghttp2-client): ${err.message}\n${stdout}`),
        );
      }
      const done = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed/.exec(
        stdout,
      );
      resolve({
        rps: Math.round(Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(stdout)?.[1])),
        meanLatency: /time for request:\s+\S+\s+\S+\s+(\S+)/.exec(stdout)?.[1],
        ok2xx: Number(/status codes: (\d+) 2xx/.exec(stdout)?.[1]),
        succeeded: Number(done?.[1]),
        failed: Number(done?.[2]),
      });
    }),
  );
}

/**
 * h2load in HTTP/1.1 mode: a C load generator, so the figure is the server's and not
 * autocannon's (autocannon needs a core of its own on this 2-core machine).
 */
export async function loadHttpNative({
  url,
  body,
  headers,
  connections = 50,
  seconds = 10,
  warmupSeconds = 2,
}) {
  const bodyFile = join(tmpdir(), `latchkey-bench-h1-${process.pid}.json`);
  writeFileSync(bodyFile, body);
  const h = { "content-type": "application/json", ...headers };
  const r = await h2load({
    url,
    bodyFile,
    headers: h,
    clients: connections,
    seconds,
    warmupSeconds,
    h1: true,
  });
  return { tool: "h2load --h1", connections, seconds, ...r };
}

/** h2load: `clients` HTTP/2 connections with `streams` concurrent streams each, for `seconds`. */
export async function loadGrpc({
  url,
  bodyFile,
  headers,
  clients = 10,
  streams = 10,
  seconds = 10,
  warmupSeconds = 2,
}) {
  const r = await h2load({
    url,
    bodyFile,
    headers,
    clients,
    streams,
    seconds,
    warmupSeconds,
    h1: false,
  });
  return { tool: "h2load", clients, streams, seconds, ...r };
}

/** The functions with the most self time in a V8 .cpuprofile, for a "below target" report. */
export function profileTop(dir, limit = 15) {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .sort()
    .at(-1);
  if (!file) return [];
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const cf = node.callFrame;
    const where = cf.url
      ? `${cf.url.replace(/^.*\/(node_modules|dist|node:)/, "$1")}:${cf.lineNumber + 1}`
      : "";
    const key = `${cf.functionName || "(anonymous)"} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([fn, us]) => ({ fn, selfPercent: Math.round((1000 * us) / total) / 10 }));
}

/**
 * Self time of the latest .cpuprofile in `dir` grouped by where the code lives: a package
 * (`node_modules/<name>`; chunks of a bundled package count as the package), a folder of
 * `dist/src`, Node's internals, WebAssembly, or V8's own entries ((garbage collector), ...).
 */
export function profileByModule(dir, limit = 12) {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .sort()
    .at(-1);
  if (!file) return [];
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const { url, functionName } = byId.get(profile.samples[i]).callFrame;
    let group;
    if (!url) group = functionName.startsWith("(") ? functionName : "(native)";
    else if (url.startsWith("wasm:")) group = "wasm";
    else if (url.startsWith("node:")) group = "node: internals";
    else {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
      const src = /dist\/src\/([^/]+)/.exec(url);
      group = pkg ? pkg[1] : src ? `dist/src/${src[1]}` : url.replace(/^.*\//, "");
    }
    self.set(group, (self.get(group) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([group, us]) => ({ group, selfPercent: Math.round((1000 * us) / total) / 10 }));
}

const adminUrl = () => process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The URL of database `name` on the admin URL's server. */
export function databaseUrlOf(name) {
  const u = new URL(adminUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Creates a fresh database `latchkey_bench_<label>_<random>`, runs `fn(url)` with it and drops
 * it afterwards (even on failure).
 */
export async function withDatabase(label, fn) {
  const { default: postgres } = await import("postgres");
  const name = `latchkey_bench_${label}_${randomBytes(6).toString("hex")}`;
  const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
    try {
      return await fn(databaseUrlOf(name));
    } finally {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/**
 * Starts the built Latchkey (dist/) on `databaseUrl` with this Node (plus `nodeArgs`, such as
 * `--cpu-prof`); resolves to its base URL and a stop.
 */
async function startLatchkey(databaseUrl, env = {}, nodeArgs = []) {
  const lk = await start(
    process.execPath,
    [...nodeArgs, "dist/src/cli/main.js", "serve"],
    {
      DATABASE_URL: databaseUrl,
      PORT: "0",
      GRPC_PORT: "off",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      ...env,
    },
    /"port":(\d+)[^\n]*latchkey listening/,
  );
  return { base: `http://127.0.0.1:${lk.match[1]}`, stop: lk.stop };
}

/** Starts Latchkey on `databaseUrl`, runs `fn(base)` and stops it (even on failure). */
export async function withLatchkey(databaseUrl, env, fn, nodeArgs = []) {
  const lk = await startLatchkey(databaseUrl, env, nodeArgs);
  try {
    return await fn(lk.base);
  } finally {
    await lk.stop();
  }
}
withLatchkey.start = startLatchkey;
