// keys.verifyKey: the measurements of the verification issue, in one report
// (bench/results/verify-<time>.json and verify-latest.json). Parts, all by default, or name some:
//
//   node bench/verify.mjs [door] [propagation] [open-loop] [credits] [scale] [memory]
//
//   door         cached key with one auto-applied rate limit, on PGlite: /v2 JSON door (autocannon
//                50 connections and h2load --h1 50) vs bare node:http, gRPC (grpc-js door, h2load
//                10 x 10 streams) vs bare grpc-js; ratios (target >= 0.5); when below, CPU
//                profiles and the /v2 door again with events dropped and on PostgreSQL
//   propagation  two processes on one PostgreSQL database (CACHE_TTL_MS=30000): B has a key
//                cached, A disables it; ms from A's answer until B answers DISABLED (target < 1 s)
//   open-loop    fixed 5,000 req/s on the /v2 door (cached key, PGlite), server on core 0 and the
//                generator (bench/open-loop.mjs) on core 1; latency from the scheduled send time
//                (target p99 < 2 ms); the same load on the bare server as the floor
//   credits      PostgreSQL, 50 connections on one key with credits: rate, and the balance left
//                must be exactly the start minus the VALID answers; vs a key without credits on
//                the same server (target ratio >= 0.3)
//   scale        PostgreSQL, cache off (CACHE_TTL_MS=0), 1,000 req/s on random keys among 10k and
//                then among 1M keys of one API, seeded with COPY (target: p50 1M <= 3x p50 10k)
//   memory       cache on (CACHE_MAX_ENTRIES), 1M distinct keys verified (closed loop); heap after a
//                forced GC (inspector) and RSS at every fifth of the way (bounded, not proportional)
//
// Environment: BENCH_SECONDS=10 (door and credits loads, after a 2 s warm-up),
// BENCH_OPEN_LOOP_SECONDS=60, BENCH_OPEN_LOOP_RATE=5000, BENCH_PROPAGATION_ROUNDS=20,
// BENCH_SCALE_SECONDS=20, BENCH_SCALE_RATE=1000, BENCH_SCALE_KEYS=1000000,
// BENCH_MEMORY_KEYS=1000000, BENCH_CACHE_MAX_ENTRIES=100000, BENCH_PROFILE=1 (always profile),
// BENCH_QUIET_WAIT_SECONDS=120 (before each measurement, wait up to this long for the machine
// to be idle 3 s in a row: other processes' CPU during each one is reported as
// `foreignCpuPercent`), BENCH_DISTURBED_PERCENT=5 (a measurement during which other processes
// took more is repeated, twice at most, and the least disturbed attempt kept),
// BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/test).
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import postgres from "postgres";
import {
  VerifyKeyCode,
  VerifyKeyRequestSchema,
  VerifyKeyResponseSchema,
} from "../dist/gen/latchkey/v2/keys_pb.js";
import { loadGrpc, loadHttp, loadHttpNative, profileByModule, profileTop, start } from "./lib.mjs";
import { preemptionProbe, spawnLoad, spawnLoadOn } from "./open-loop.mjs";
import { readStat, TICKS_PER_SECOND } from "./proc.mjs";

const env = process.env;
const num = (name, dflt) => Number(env[name] ?? dflt);
const seconds = num("BENCH_SECONDS", 10);
const openLoopSeconds = num("BENCH_OPEN_LOOP_SECONDS", 60);
const openLoopRate = num("BENCH_OPEN_LOOP_RATE", 5000);
const propagationRounds = num("BENCH_PROPAGATION_ROUNDS", 20);
const scaleSeconds = num("BENCH_SCALE_SECONDS", 20);
const scaleRate = num("BENCH_SCALE_RATE", 1000);
const scaleKeys = num("BENCH_SCALE_KEYS", 1_000_000);
const SMALL_KEYS = 10_000;
const memoryKeys = num("BENCH_MEMORY_KEYS", 1_000_000);
const cacheMaxEntries = num("BENCH_CACHE_MAX_ENTRIES", 100_000);
const alwaysProfile = env.BENCH_PROFILE === "1";
const quietWaitSeconds = num("BENCH_QUIET_WAIT_SECONDS", 120);
const disturbedPercent = num("BENCH_DISTURBED_PERCENT", 5);
const adminUrl = env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const PARTS = ["door", "propagation", "open-loop", "credits", "scale", "memory"];
const results = new URL("./results/", import.meta.url).pathname;
const rootKey = "bench_root_key_0123456789abcdef";
const auth = { authorization: `Bearer ${rootKey}` };
const VERIFY_PATH = "/latchkey.v2.KeysService/VerifyKey";
const HIGH_LIMIT = [{ name: "requests", limit: 1_000_000_000, duration: 60_000 }];

const round = (x, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) =>
  xs.length === 0
    ? null
    : round(
        xs.toSorted((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)],
        3,
      );

// ---------------------------------------------------------------------------------------------
// Checks: a failed check is reported (and makes the exit code 1) but does not stop the run.

const problems = [];
function check(ok, what) {
  if (!ok) {
    problems.push(what);
    console.log(`  CHECK FAILED: ${what}`);
  }
  return ok;
}

// ---------------------------------------------------------------------------------------------
// The machine is shared: other processes' CPU during a measurement, and waiting for quiet.

const ourDatabases = new Set();

/** Busy ticks of the whole machine, and of this process tree plus our PostgreSQL backends. */
function cpuSnapshot() {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = line.slice(1).map(Number);
  const machine = user + nice + system + irq + softirq + steal;
  const procs = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const s = readStat(d);
    if (s) procs.set(Number(d), s);
  }
  const ours = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, s] of procs) {
      if (!ours.has(pid) && ours.has(s.ppid)) {
        ours.add(pid);
        grew = true;
      }
    }
  }
  let own = procs.get(process.pid)?.childTicks ?? 0;
  for (const pid of ours) own += procs.get(pid)?.ticks ?? 0;
  for (const [pid, s] of procs) {
    if (ours.has(pid)) continue;
    let cmd = "";
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {}
    if (cmd.startsWith("postgres:") && [...ourDatabases].some((db) => cmd.includes(db))) {
      own += s.ticks;
    }
  }
  return { at: performance.now(), machine, own };
}

/** Other processes' share of the machine's CPU between two snapshots, in percent. */
function foreignCpuPercent(a, b) {
  const capacity = ((b.at - a.at) / 1000) * TICKS_PER_SECOND * cpus().length;
  const foreign = b.machine - a.machine - (b.own - a.own);
  return round(Math.max(0, (100 * foreign) / capacity), 1);
}

/**
 * Waits (bounded by BENCH_QUIET_WAIT_SECONDS) until the machine has been below 10% busy for
 * three seconds in a row; returns the wait and the last second's load.
 */
async function waitQuiet() {
  const t0 = performance.now();
  let busy = 100;
  let quiet = 0;
  while (quiet < 3 && performance.now() - t0 < quietWaitSeconds * 1000) {
    const a = cpuSnapshot();
    await sleep(1000);
    const b = cpuSnapshot();
    const capacity = ((b.at - a.at) / 1000) * TICKS_PER_SECOND * cpus().length;
    busy = (100 * (b.machine - a.machine)) / capacity;
    quiet = busy < 10 ? quiet + 1 : 0;
  }
  return { waitedSeconds: round((performance.now() - t0) / 1000, 1), busyBefore: round(busy, 1) };
}

/**
 * Runs one measurement after waiting for quiet and adds the disturbance to its result. When
 * other processes took more than BENCH_DISTURBED_PERCENT of the machine meanwhile, it is
 * repeated (twice at most) and the least disturbed attempt is kept.
 */
async function measure(fn, { retries = 2 } = {}) {
  let best;
  const discarded = [];
  for (let attempt = 1; attempt <= retries + 1; attempt++) {
    const quiet = await waitQuiet();
    const a = cpuSnapshot();
    const r = await fn();
    const b = cpuSnapshot();
    const res = {
      ...r,
      machine: { ...quiet, foreignCpuPercent: foreignCpuPercent(a, b), attempt },
    };
    if (!best || res.machine.foreignCpuPercent < best.machine.foreignCpuPercent) {
      if (best) discarded.push(best.machine);
      best = res;
    } else discarded.push(res.machine);
    if (res.machine.foreignCpuPercent <= disturbedPercent) break;
    console.log(
      `  (other processes took ${res.machine.foreignCpuPercent}% of the machine during attempt ${attempt})`,
    );
  }
  if (discarded.length > 0) best.machine.discardedAttempts = discarded;
  return best;
}

// ---------------------------------------------------------------------------------------------
// Latchkey, PostgreSQL and the calls.

const READY = /"port":(\d+)[^\n]*latchkey listening/;
const READY_GRPC = /"port":(\d+),"grpcPort":(\d+)[^\n]*latchkey listening/;

/**
 * Starts Latchkey on Node 24 (this process's runtime): with `cpu`, pinned with taskset; with
 * `inspect`, with an inspector on a free port (to force a GC before reading the heap).
 */
async function startLatchkey({ env: extra, cpu, nodeArgs = [], grpcDoor = false, inspect }) {
  const args = [
    ...nodeArgs,
    ...(inspect ? ["--inspect=127.0.0.1:0"] : []),
    "dist/src/cli/main.js",
    "serve",
  ];
  const [bin, argv] =
    cpu === undefined
      ? [process.execPath, args]
      : ["taskset", ["-c", String(cpu), process.execPath, ...args]];
  const ready = grpcDoor ? READY_GRPC : READY;
  const regex = inspect
    ? new RegExp(`ws://(127\\.0\\.0\\.1:\\d+/[\\w-]+)[\\s\\S]*?${ready.source}`)
    : ready;
  const lk = await start(
    bin,
    argv,
    {
      PORT: "0",
      GRPC_PORT: grpcDoor ? "0" : "off",
      HOST: "127.0.0.1",
      ROOT_KEY: rootKey,
      LOG_LEVEL: "info",
      ...extra,
    },
    regex,
  );
  const m = inspect ? lk.match.slice(1) : lk.match;
  return {
    base: `http://127.0.0.1:${m[1]}`,
    grpcPort: grpcDoor ? Number(m[2]) : undefined,
    inspector: inspect ? lk.match[1] : undefined,
    pid: lk.child.pid,
    stop: lk.stop,
  };
}

/** One /v2 call (root key unless `anonymous`); throws unless 2xx. */
async function call(base, procedure, body, { anonymous = false } = {}) {
  const res = await fetch(`${base}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(anonymous ? {} : auth) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${procedure}: HTTP ${res.status} ${text}`);
  return JSON.parse(text);
}

const verifyJson = async (base, key) =>
  (await call(base, "keys.verifyKey", { key }, { anonymous: true })).data;

/** An API and a key in it (`fields` are createKey's): { apiId, keyId, key }. */
async function seedKey(base, fields, apiId) {
  const id = apiId ?? (await call(base, "apis.createApi", { name: "bench" })).data.apiId;
  const { data } = await call(base, "keys.createKey", { apiId: id, ...fields });
  return { apiId: id, keyId: data.keyId, key: data.key };
}

/** Verification counts by code, verifyKey calls by door and status, memory and events. */
async function metrics(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = { codes: {}, calls: {} };
  for (const line of text.split("\n")) {
    let m = /^latchkey_verifications_total\{code="(\w+)"\} (\S+)/.exec(line);
    if (m) out.codes[m[1]] = Number(m[2]);
    m =
      /^latchkey_request_duration_seconds_count\{procedure="keys\.verifyKey",door="(\w+)",status="(\d+)"\} (\S+)/.exec(
        line,
      );
    if (m) out.calls[`${m[1]} ${m[2]}`] = Number(m[3]);
    m =
      /^latchkey_(process_resident_memory_bytes|nodejs_heap_size_used_bytes|nodejs_heap_size_total_bytes|events_\w+|event_flush_failures) (\S+)/.exec(
        line,
      );
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

function delta(a = {}, b = {}) {
  const out = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = (b[k] ?? 0) - (a[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** Checks that between two metric readings every verification was VALID and every call 200. */
function checkAllValid(what, before, after) {
  const codes = delta(before.codes, after.codes);
  const calls = delta(before.calls, after.calls);
  const bad = Object.entries(codes).filter(([c]) => c !== "VALID");
  const badCalls = Object.entries(calls).filter(([k]) => !k.endsWith(" 200"));
  check(bad.length === 0, `${what}: answers other than VALID: ${JSON.stringify(bad)}`);
  check(badCalls.length === 0, `${what}: calls not 200: ${JSON.stringify(badCalls)}`);
  check((codes.VALID ?? 0) > 0, `${what}: no VALID answers counted`);
  const events = {};
  for (const k of ["recorded", "dropped", "written", "buffered"]) {
    events[k] = (after[`events_${k}`] ?? 0) - (k === "buffered" ? 0 : (before[`events_${k}`] ?? 0));
  }
  return { codes, calls, events };
}

function dbUrl(name) {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function createDatabase() {
  const name = `latchkey_bench_verify_${randomBytes(6).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  ourDatabases.add(name);
  return { name, url: dbUrl(name) };
}

async function dropDatabase(name) {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    ourDatabases.delete(name);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** Runs `fn(db)` on a fresh database, dropped afterwards (even on failure). */
async function withDatabase(fn) {
  const db = await createDatabase();
  try {
    return await fn(db);
  } finally {
    await dropDatabase(db.name);
  }
}

async function withSql(url, fn) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

// ---------------------------------------------------------------------------------------------
// gRPC: a request frame for h2load and one checked call with grpc-js.

function grpcBodyFile(key) {
  const msg = toBinary(VerifyKeyRequestSchema, create(VerifyKeyRequestSchema, { key }));
  const frame = Buffer.alloc(5 + msg.length);
  frame.writeUInt32BE(msg.length, 1);
  Buffer.from(msg).copy(frame, 5);
  const file = join(tmpdir(), `latchkey-bench-verify-${process.pid}.bin`);
  writeFileSync(file, frame);
  return file;
}
const grpcHeaders = { "content-type": "application/grpc", te: "trailers" };

function grpcVerify(port, key) {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      VERIFY_PATH,
      (m) => Buffer.from(toBinary(VerifyKeyRequestSchema, m)),
      (b) => fromBinary(VerifyKeyResponseSchema, b),
      create(VerifyKeyRequestSchema, { key }),
      (err, res) => {
        client.close();
        if (err) reject(err);
        else resolve(res);
      },
    );
  });
}

function mustBeClean(what, r) {
  if (r.tool === "autocannon") {
    check(r.non2xx === 0 && r.errors === 0, `${what}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  } else {
    // h2load counts a status when the headers arrive: requests in flight at the warm-up's
    // end or at the stop make the 2xx count and the succeeded count differ by a few.
    const inFlight = (r.clients ?? r.connections) * (r.streams ?? 1);
    check(
      r.failed === 0 && Math.abs(r.ok2xx - r.succeeded) <= inFlight && r.succeeded > 0,
      `${what}: h2load ${r.succeeded} succeeded, ${r.ok2xx} 2xx, ${r.failed} failed`,
    );
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// 1. The doors vs bare servers.

async function partDoor() {
  const out = {
    runtime: process.version,
    storage: "pglite",
    key: "cached, one auto-applied limit",
  };
  const sampleBody = JSON.stringify({ key: "4ZeTggi7oYuRWk9tk5e8n2" });

  const bare = await start(
    process.execPath,
    ["bench/servers/bare-http-verify.mjs"],
    {},
    /\{"port":(\d+)\}/,
  );
  try {
    const url = `http://127.0.0.1:${bare.match[1]}/`;
    const one = await fetch(url, { method: "POST", body: sampleBody }).then((r) => r.json());
    check(one.data?.code === "VALID", `bare http answer: ${JSON.stringify(one)}`);
    out.bareHttp = mustBeClean(
      "bare http",
      await measure(() => loadHttp({ url, body: sampleBody, seconds })),
    );
    out.bareHttpNative = mustBeClean(
      "bare http h2load",
      await measure(() => loadHttpNative({ url, body: sampleBody, seconds })),
    );
  } finally {
    await bare.stop();
  }
  console.log(
    `bare node:http      ${out.bareHttp.rps} req/s (autocannon), ${out.bareHttpNative.rps} (h2load --h1)`,
  );

  const dataDir = mkdtempSync(join(tmpdir(), "latchkey-bench-verify-"));
  let file;
  try {
    const lk = await startLatchkey({ env: { DATA_DIR: dataDir }, grpcDoor: true });
    try {
      const { key } = await seedKey(lk.base, { ratelimits: HIGH_LIMIT });
      const first = await verifyJson(lk.base, key);
      check(
        first.code === "VALID" && first.ratelimits?.length === 1 && first.ratelimits[0].autoApply,
        `first verification: ${JSON.stringify(first)}`,
      );
      out.sampleAnswer = first;
      const g = await grpcVerify(lk.grpcPort, key);
      check(g.data?.code === VerifyKeyCode.VALID, `gRPC answer code ${g.data?.code}`);
      const before = await metrics(lk.base);
      const url = `${lk.base}/v2/keys.verifyKey`;
      const body = JSON.stringify({ key });
      out.jsonDoor = mustBeClean(
        "json door",
        await measure(() => loadHttp({ url, body, seconds })),
      );
      out.jsonDoorNative = mustBeClean(
        "json door h2load",
        await measure(() => loadHttpNative({ url, body, seconds })),
      );
      console.log(
        `latchkey /v2 door   ${out.jsonDoor.rps} req/s (autocannon), ${out.jsonDoorNative.rps} (h2load --h1)`,
      );
      file = grpcBodyFile(key);
      out.grpcJs = mustBeClean(
        "grpc door",
        await measure(() =>
          loadGrpc({
            url: `http://127.0.0.1:${lk.grpcPort}${VERIFY_PATH}`,
            bodyFile: file,
            headers: grpcHeaders,
            seconds,
          }),
        ),
      );
      console.log(`latchkey gRPC door  ${out.grpcJs.rps} req/s (grpc-js, GRPC_PORT)`);
      out.answers = checkAllValid("door", before, await metrics(lk.base));
    } finally {
      await lk.stop();
    }

    const bareGrpc = await start(
      process.execPath,
      ["bench/servers/bare-grpc-verify.mjs"],
      {},
      /\{"port":(\d+)\}/,
    );
    try {
      const port = Number(bareGrpc.match[1]);
      const g = await grpcVerify(port, "4ZeTggi7oYuRWk9tk5e8n2");
      check(g.data?.code === VerifyKeyCode.VALID, `bare gRPC answer code ${g.data?.code}`);
      out.bareGrpc = mustBeClean(
        "bare grpc",
        await measure(() =>
          loadGrpc({
            url: `http://127.0.0.1:${port}${VERIFY_PATH}`,
            bodyFile: file,
            headers: grpcHeaders,
            seconds,
          }),
        ),
      );
    } finally {
      await bareGrpc.stop();
    }
    console.log(`bare grpc-js        ${out.bareGrpc.rps} req/s`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    if (file) rmSync(file, { force: true });
  }

  out.ratios = {
    jsonDoorOfBareHttp: round(out.jsonDoor.rps / out.bareHttp.rps),
    jsonDoorOfBareHttpNative: round(out.jsonDoorNative.rps / out.bareHttpNative.rps),
    grpcJsOfBareGrpc: round(out.grpcJs.rps / out.bareGrpc.rps),
  };
  console.log("ratios (target >= 0.5)", out.ratios);
  const jsonLow = out.ratios.jsonDoorOfBareHttp < 0.5 || out.ratios.jsonDoorOfBareHttpNative < 0.5;
  const grpcLow = out.ratios.grpcJsOfBareGrpc < 0.5;
  if (jsonLow || alwaysProfile) {
    out.profileJson = await profileDoor("json");
    // Diagnosis: the same door with verification events (almost) all dropped instead of
    // written to PGlite, which runs on the server's own thread.
    out.jsonDoorEventsOff = await jsonDoorOnly({ EVENT_BUFFER_SIZE: "1" });
    out.ratios.jsonDoorEventsOffOfBareHttp = round(out.jsonDoorEventsOff.rps / out.bareHttp.rps);
    out.ratios.jsonDoorEventsOffOfBareHttpNative = round(
      out.jsonDoorEventsOff.native.rps / out.bareHttpNative.rps,
    );
    console.log(
      `with EVENT_BUFFER_SIZE=1 (events dropped): ${out.jsonDoorEventsOff.rps} req/s (autocannon),` +
        ` ${out.jsonDoorEventsOff.native.rps} (h2load --h1): ratios` +
        ` ${out.ratios.jsonDoorEventsOffOfBareHttp} / ${out.ratios.jsonDoorEventsOffOfBareHttpNative}`,
    );
    out.profileJsonEventsOff = await profileDoor("json", { EVENT_BUFFER_SIZE: "1" });
    // And on PostgreSQL, the production storage: the events are written by the database's
    // own process (which shares this machine's two cores with the server and the load).
    out.jsonDoorPostgres = await withDatabase((db) => jsonDoorOnly({ DATABASE_URL: db.url }));
    out.ratios.jsonDoorPostgresOfBareHttp = round(out.jsonDoorPostgres.rps / out.bareHttp.rps);
    out.ratios.jsonDoorPostgresOfBareHttpNative = round(
      out.jsonDoorPostgres.native.rps / out.bareHttpNative.rps,
    );
    console.log(
      `on PostgreSQL: ${out.jsonDoorPostgres.rps} req/s (autocannon),` +
        ` ${out.jsonDoorPostgres.native.rps} (h2load --h1): ratios` +
        ` ${out.ratios.jsonDoorPostgresOfBareHttp} / ${out.ratios.jsonDoorPostgresOfBareHttpNative}`,
    );
  }
  if (grpcLow || alwaysProfile) out.profileGrpc = await profileDoor("grpc");
  return out;
}

/**
 * The /v2 door alone on a fresh Latchkey with `extraEnv` (autocannon, then h2load): PGlite in a
 * new data directory unless `extraEnv` names a DATABASE_URL.
 */
async function jsonDoorOnly(extraEnv) {
  const dataDir = mkdtempSync(join(tmpdir(), "latchkey-bench-verify-"));
  try {
    const lk = await startLatchkey({ env: { DATA_DIR: dataDir, ...extraEnv } });
    try {
      const { key } = await seedKey(lk.base, { ratelimits: HIGH_LIMIT });
      check((await verifyJson(lk.base, key)).code === "VALID", "door: first answer");
      const before = await metrics(lk.base);
      const url = `${lk.base}/v2/keys.verifyKey`;
      const body = JSON.stringify({ key });
      const r = mustBeClean("json door", await measure(() => loadHttp({ url, body, seconds })));
      r.native = mustBeClean(
        "json door h2load",
        await measure(() => loadHttpNative({ url, body, seconds })),
      );
      r.answers = checkAllValid("door", before, await metrics(lk.base));
      return { env: extraEnv, ...r };
    } finally {
      await lk.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * A CPU profile of Latchkey under the JSON (autocannon) or gRPC (h2load) load, taken through
 * the inspector during the measured seconds only (not the start, which runs PGlite's initdb).
 */
async function profileDoor(door, extraEnv = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "latchkey-bench-verify-"));
  const profDir = mkdtempSync(join(tmpdir(), "latchkey-bench-verify-prof-"));
  let file;
  let rps;
  try {
    const lk = await startLatchkey({
      env: { DATA_DIR: dataDir, ...extraEnv },
      grpcDoor: true,
      inspect: true,
    });
    try {
      const { key } = await seedKey(lk.base, { ratelimits: HIGH_LIMIT });
      file = grpcBodyFile(key);
      const load = (s, warmupSeconds) =>
        door === "json"
          ? loadHttp({
              url: `${lk.base}/v2/keys.verifyKey`,
              body: JSON.stringify({ key }),
              seconds: s,
              warmupSeconds,
            })
          : loadGrpc({
              url: `http://127.0.0.1:${lk.grpcPort}${VERIFY_PATH}`,
              bodyFile: file,
              headers: grpcHeaders,
              seconds: s,
              warmupSeconds,
            });
      await load(3, 1); // warm-up, not profiled
      const s = await inspectorSession(lk.inspector);
      let profile;
      try {
        await s.send("Profiler.enable");
        await s.send("Profiler.setSamplingInterval", { interval: 200 });
        await s.send("Profiler.start");
        rps = (await load(seconds, 1)).rps;
        profile = (await s.send("Profiler.stop")).profile;
      } finally {
        s.close();
      }
      writeFileSync(join(profDir, "load.cpuprofile"), JSON.stringify(profile));
    } finally {
      await lk.stop();
    }
    const top = profileTop(profDir, 20);
    const byModule = profileByModule(profDir, 15);
    console.log(`profile under the ${door} load, self time by function and by module:`);
    for (const t of top.slice(0, 12))
      console.log(`  ${String(t.selfPercent).padStart(5)}%  ${t.fn}`);
    console.log(`  ${byModule.map((m) => `${m.group} ${m.selfPercent}%`).join(", ")}`);
    return { env: extraEnv, rpsWhileProfiled: rps, top, byModule };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profDir, { recursive: true, force: true });
    if (file) rmSync(file, { force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Propagation of a change to a second process.

async function partPropagation() {
  return withDatabase(async (db) => {
    const envPg = { DATABASE_URL: db.url, CACHE_TTL_MS: "30000" };
    const a = await startLatchkey({ env: envPg });
    try {
      const b = await startLatchkey({ env: envPg });
      try {
        const { apiId } = await seedKey(a.base, {});
        const rounds = [];
        const pollTimes = [];
        for (let i = 0; i < propagationRounds; i++) {
          const { keyId, key } = await seedKey(a.base, { ratelimits: HIGH_LIMIT }, apiId);
          // B caches the key (a miss loads it; the second answer comes from the cache).
          for (let j = 0; j < 2; j++) {
            const v = await verifyJson(b.base, key);
            check(v.code === "VALID", `propagation: B's answer before the change: ${v.code}`);
          }
          await sleep(20 + Math.random() * 30);
          const tA0 = performance.now();
          await call(a.base, "keys.updateKey", { keyId, enabled: false });
          const tA1 = performance.now();
          let polls = 0;
          let seen = null;
          while (performance.now() - tA1 < 35_000 && polls < 1_000_000) {
            const t = performance.now();
            const v = await verifyJson(b.base, key);
            pollTimes.push(performance.now() - t);
            polls++;
            if (v.code === "DISABLED") {
              seen = performance.now();
              break;
            }
            check(v.code === "VALID", `propagation: B answered ${v.code}`);
          }
          check(seen !== null, `propagation round ${i}: B never answered DISABLED`);
          rounds.push({
            ms: round((seen ?? Number.NaN) - tA1, 3),
            fromRequestMs: round((seen ?? Number.NaN) - tA0, 3),
            updateMs: round(tA1 - tA0, 3),
            polls,
          });
        }
        const ms = rounds.map((r) => r.ms);
        const out = {
          storage: "postgresql",
          cacheTtlMs: 30000,
          rounds: rounds.length,
          p50Ms: pct(ms, 50),
          p99Ms: pct(ms, 99),
          maxMs: pct(ms, 100),
          fromRequestStart: {
            p50Ms: pct(
              rounds.map((r) => r.fromRequestMs),
              50,
            ),
            maxMs: pct(
              rounds.map((r) => r.fromRequestMs),
              100,
            ),
          },
          updateKeyP50Ms: pct(
            rounds.map((r) => r.updateMs),
            50,
          ),
          pollRoundTripP50Ms: pct(pollTimes, 50),
          firstPollAlreadyDisabled: rounds.filter((r) => r.polls === 1).length,
          each: rounds,
        };
        console.log(
          `A's updateKey answer -> B answers DISABLED: p50 ${out.p50Ms} ms, p99 ${out.p99Ms} ms,` +
            ` max ${out.maxMs} ms over ${out.rounds} rounds (one poll takes ~${out.pollRoundTripP50Ms} ms;` +
            ` ${out.firstPollAlreadyDisabled} rounds DISABLED at the first poll)`,
        );
        return out;
      } finally {
        await b.stop();
      }
    } finally {
      await a.stop();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// 3. Open loop at a fixed rate, server and generator on separate cores.

/**
 * The open-loop load on a Latchkey pinned to core 0 (PGlite, or PostgreSQL with `databaseUrl`),
 * the generator on core 1.
 */
async function openLoopLatchkey({ label, extraEnv = {}, databaseUrl, loadSeconds }) {
  const dataDir = mkdtempSync(join(tmpdir(), "latchkey-bench-verify-"));
  try {
    const storage = databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir };
    const lk = await startLatchkey({ env: { ...storage, ...extraEnv }, cpu: 0 });
    try {
      const { key } = await seedKey(lk.base, { ratelimits: HIGH_LIMIT });
      check((await verifyJson(lk.base, key)).code === "VALID", `${label}: first answer`);
      const before = await metrics(lk.base);
      const r = await measure(() =>
        spawnLoadOn(
          lk.pid,
          {
            url: `${lk.base}/v2/keys.verifyKey`,
            rate: openLoopRate,
            seconds: loadSeconds,
            warmupSeconds: 5,
            body: JSON.stringify({ key }),
            expectCode: "VALID",
            maxSockets: 256,
          },
          { cpu: 1 },
        ),
      );
      r.answers = checkAllValid(label, before, await metrics(lk.base));
      check(r.lost === 0 && r.non2xx === 0 && r.errors === 0, `${label}: ${r.lost} lost`);
      check(r.unexpectedCodes === 0, `${label}: ${r.unexpectedCodes} answers not VALID`);
      console.log(
        `${label}: ${openLoopRate} req/s for ${loadSeconds} s: p50 ${r.p50Ms} p90 ${r.p90Ms}` +
          ` p99 ${r.p99Ms} p99.9 ${r.p999Ms} max ${r.maxMs} ms; achieved ${r.achievedRate} req/s,` +
          ` errors ${r.errors + r.non2xx}, generator send lag p99 ${r.sendLag.p99Ms} ms;` +
          ` server CPU ${r.server.cpuUsPerRequest} us/request, preempted ${r.server.involuntarySwitches} times`,
      );
      return { storage: databaseUrl ? "postgresql" : "pglite", env: extraEnv, ...r };
    } finally {
      await lk.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function partOpenLoop() {
  const out = {
    storage: "pglite",
    rate: openLoopRate,
    seconds: openLoopSeconds,
    pinning: "server taskset -c 0, generator taskset -c 1",
  };
  out.latchkey = await openLoopLatchkey({ label: "latchkey", loadSeconds: openLoopSeconds });
  const diagSeconds = Math.min(openLoopSeconds, 20);
  if (out.latchkey.p99Ms >= 2 || alwaysProfile) {
    // Diagnosis: the verification events are written to PGlite in one batch per second on
    // the server's thread. The same load with them (almost) all dropped, with a flush every
    // 100 ms, and on PostgreSQL (where the insert runs in another process).
    out.diagnosis = {
      eventsDropped: await openLoopLatchkey({
        label: "latchkey, EVENT_BUFFER_SIZE=1",
        extraEnv: { EVENT_BUFFER_SIZE: "1" },
        loadSeconds: diagSeconds,
      }),
      flushEvery100ms: await openLoopLatchkey({
        label: "latchkey, EVENT_FLUSH_INTERVAL_MS=100",
        extraEnv: { EVENT_FLUSH_INTERVAL_MS: "100" },
        loadSeconds: diagSeconds,
      }),
      postgres: await withDatabase((db) =>
        openLoopLatchkey({
          label: "latchkey on PostgreSQL",
          databaseUrl: db.url,
          loadSeconds: diagSeconds,
        }),
      ),
    };
  }

  // The floor: the same generator and schedule against the bare server on the same core.
  const bareSeconds = diagSeconds;
  const bare = await start(
    "taskset",
    ["-c", "0", process.execPath, "bench/servers/bare-http-verify.mjs"],
    {},
    /\{"port":(\d+)\}/,
  );
  try {
    out.bareHttp = await measure(() =>
      spawnLoadOn(
        bare.child.pid,
        {
          url: `http://127.0.0.1:${bare.match[1]}/`,
          rate: openLoopRate,
          seconds: bareSeconds,
          warmupSeconds: 5,
          body: JSON.stringify({ key: "4ZeTggi7oYuRWk9tk5e8n2" }),
          expectCode: "VALID",
          maxSockets: 256,
        },
        { cpu: 1 },
      ),
    );
  } finally {
    await bare.stop();
  }
  const f = out.bareHttp;
  console.log(
    `bare node:http (floor, ${bareSeconds} s): p50 ${f.p50Ms} p99 ${f.p99Ms} p99.9 ${f.p999Ms} max ${f.maxMs} ms;` +
      ` server CPU ${f.server.cpuUsPerRequest} us/request, preempted ${f.server.involuntarySwitches} times`,
  );
  out.cpuPerRequestRatio = round(f.server.cpuUsPerRequest / out.latchkey.server.cpuUsPerRequest);
  // The machine's own floor: a process that does nothing but spin on the server's core, while
  // another spins on the generator's, loses its core to the kernel and the other services now
  // and then; a request in flight then waits as long.
  out.preemption = await preemptionProbe({ cpu: 0, other: 1, seconds: 10 });
  const p = out.preemption;
  console.log(
    `preemption of a spinning process on core 0 (10 s): ${p.gapsOverMs[1]} gaps over 1 ms,` +
      ` ${p.gapsOverMs[2]} over 2 ms, longest ${p.maxGapMs} ms, ${p.lostMs} ms lost`,
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// 4. Credits on one hot key, on PostgreSQL: rate and exactness.

/** autocannon on the credits key or the plain one; every answer must be VALID. */
const loadCounted = ({ url, body }) =>
  loadHttp({ url, body, seconds, verifyBody: (b) => b.includes('"code":"VALID"') });

async function partCredits() {
  const START = 100_000_000;
  return withDatabase(async (db) => {
    const lk = await startLatchkey({ env: { DATABASE_URL: db.url } });
    try {
      const out = { storage: "postgresql", connections: 50, seconds, startCredits: START };
      const withCredits = await seedKey(lk.base, { credits: { remaining: START } });
      const plain = await seedKey(lk.base, {}, withCredits.apiId);
      const url = `${lk.base}/v2/keys.verifyKey`;

      const v = await verifyJson(lk.base, withCredits.key);
      check(v.code === "VALID" && v.credits === START - 1, `credits: first answer ${v.credits}`);
      const before = await metrics(lk.base);
      // Not repeated when disturbed: the client's count must cover every request sent.
      out.withCredits = await measure(
        () => loadCounted({ url, body: JSON.stringify({ key: withCredits.key }) }),
        { retries: 0 },
      );
      await sleep(1000); // requests cut off by autocannon's stop finish on the server
      const after = await metrics(lk.base);
      out.withCredits.answers = checkAllValid("credits", before, after);
      const serverValid = 1 + (out.withCredits.answers.codes.VALID ?? 0);
      const remaining = await withSql(db.url, async (sql) => {
        const [row] = await sql`select remaining from keys where id = ${withCredits.keyId}`;
        return Number(row.remaining);
      });
      const viaApi = (await call(lk.base, "keys.getKey", { keyId: withCredits.keyId })).data;
      const c = out.withCredits;
      check(c.non2xx === 0 && c.errors === 0, `credits: ${c.non2xx} non-2xx, ${c.errors} errors`);
      check(c.notValid === 0, `credits: ${c.notValid} answers not VALID`);
      out.exactness = {
        remainingInDb: remaining,
        remainingViaGetKey: viaApi.credits?.remaining,
        validAnswersCountedByServer: serverValid,
        validAnswersReceivedByClient: 1 + c.answered2xx - c.notValid,
        expectedRemaining: START - serverValid,
        exact: remaining === START - serverValid,
        note:
          "the server's count (latchkey_verifications_total{code=VALID}) includes the requests" +
          " autocannon cut off when it stopped (answered by the server, not read by the client)",
      };
      check(out.exactness.exact, `credits: remaining ${remaining} != ${START} - ${serverValid}`);
      check(
        serverValid - out.exactness.validAnswersReceivedByClient <= 2 * out.connections &&
          serverValid >= out.exactness.validAnswersReceivedByClient,
        "credits: client and server counts differ by more than the requests in flight",
      );

      check((await verifyJson(lk.base, plain.key)).code === "VALID", "no-credits first answer");
      const before2 = await metrics(lk.base);
      out.withoutCredits = await measure(() =>
        loadCounted({ url, body: JSON.stringify({ key: plain.key }) }),
      );
      out.withoutCredits.answers = checkAllValid("no credits", before2, await metrics(lk.base));
      out.ratio = round(out.withCredits.rps / out.withoutCredits.rps);
      console.log(
        `with credits ${out.withCredits.rps} req/s (p50 ${out.withCredits.p50Ms} ms, p99 ${out.withCredits.p99Ms} ms),` +
          ` without ${out.withoutCredits.rps} req/s: ratio ${out.ratio} (target >= 0.3)`,
      );
      console.log(
        `balance ${remaining} = ${START} - ${serverValid} VALID answers: ${out.exactness.exact ? "exact" : "NOT EXACT"}` +
          ` (client read ${out.exactness.validAnswersReceivedByClient} of them)`,
      );
      return out;
    } finally {
      await lk.stop();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// 5. Many keys: cache off at a fixed rate (10k vs 1M keys), and the cache's memory.

// One database with seeded keys, shared by `scale` and `memory` (dropped at the end).
let seeded = null;

async function seededDatabase() {
  if (!seeded) seeded = { ...(await createDatabase()), count: 0 };
  return seeded;
}

/** The API of the seeded keys, created through `base` on first use. */
async function seededApi(db, base) {
  if (!db.apiId) {
    db.apiId = (await call(base, "apis.createApi", { name: "bench many keys" })).data.apiId;
    db.workspaceId = await withSql(db.url, async (sql) => {
      const [row] = await sql`select workspace_id from apis where id = ${db.apiId}`;
      return row.workspace_id;
    });
  }
}

const secretOf = (i) => `bench_${i}`;

/** Adds keys `bench_<count>`..`bench_<upTo - 1>` with COPY; returns the seconds it took. */
async function seedMany(db, upTo) {
  if (db.count >= upTo) return 0;
  const t0 = performance.now();
  const now = Date.now();
  const from = db.count;
  await withSql(db.url, async (sql) => {
    function* lines() {
      const CHUNK = 10_000;
      for (let s = from; s < upTo; s += CHUNK) {
        let text = "";
        for (let i = s; i < Math.min(upTo, s + CHUNK); i++) {
          const secret = secretOf(i);
          const hash = createHash("sha256").update(secret, "utf8").digest("base64");
          const id = `key_b${String(i).padStart(15, "0")}`;
          text += `${id}\t${db.workspaceId}\t${db.apiId}\t${hash}\t${secret.slice(0, 10)}\tbench\tt\t${now}\n`;
        }
        yield text;
      }
    }
    const stream =
      await sql`copy keys (id, workspace_id, api_id, hash, start, prefix, enabled, created_at) from stdin`.writable();
    await pipeline(Readable.from(lines()), stream);
    await sql`vacuum (analyze) keys`;
    await sql`checkpoint`;
  });
  db.count = upTo;
  const s = round((performance.now() - t0) / 1000, 1);
  console.log(`seeded keys ${from}..${upTo - 1} with COPY in ${s} s`);
  return s;
}

async function partScale() {
  const db = await seededDatabase();
  const lk = await startLatchkey({ env: { DATABASE_URL: db.url, CACHE_TTL_MS: "0" } });
  try {
    await seededApi(db, lk.base);
    const out = { storage: "postgresql", cacheTtlMs: 0, rate: scaleRate, seconds: scaleSeconds };
    const run = async (count) => {
      const seedSeconds = await seedMany(db, count);
      const probe = Math.floor(Math.random() * count);
      check(
        (await verifyJson(lk.base, secretOf(probe))).code === "VALID",
        `scale: key ${probe} of ${count} not VALID`,
      );
      const before = await metrics(lk.base);
      const r = await measure(() =>
        spawnLoad({
          url: `${lk.base}/v2/keys.verifyKey`,
          rate: scaleRate,
          seconds: scaleSeconds,
          warmupSeconds: 5,
          keys: { prefix: "bench_", from: 0, count },
          expectCode: "VALID",
          maxSockets: 256,
        }),
      );
      r.answers = checkAllValid(`scale ${count}`, before, await metrics(lk.base));
      check(r.lost === 0 && r.unexpectedCodes === 0, `scale ${count}: ${r.lost} lost`);
      console.log(
        `${count} keys, cache off, ${scaleRate} req/s random keys: p50 ${r.p50Ms} p99 ${r.p99Ms}` +
          ` max ${r.maxMs} ms (achieved ${r.achievedRate} req/s)`,
      );
      return { keys: count, seedSeconds, ...r };
    };
    out.small = await run(SMALL_KEYS);
    out.large = await run(scaleKeys);
    out.p50Ratio = round(out.large.p50Ms / out.small.p50Ms);
    out.p99Ratio = round(out.large.p99Ms / out.small.p99Ms);
    console.log(`p50 ratio ${scaleKeys}/${SMALL_KEYS} keys: ${out.p50Ratio} (target <= 3)`);
    return out;
  } finally {
    await lk.stop();
  }
}

/** A session on a server's inspector (`--inspect`): `send(method, params)` resolves with the result. */
async function inspectorSession(inspector) {
  const ws = new WebSocket(`ws://${inspector}`);
  const pending = new Map();
  const closed = new Promise((_, reject) => {
    ws.onclose = () => reject(new Error("inspector connection closed"));
    ws.onerror = () => reject(new Error("inspector connection failed"));
  });
  closed.catch(() => {});
  await Promise.race([new Promise((resolve) => ws.addEventListener("open", resolve)), closed]);
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    pending.get(m.id)?.(m);
  };
  let id = 0;
  const send = async (method, params = {}) => {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`inspector: ${method} timed out`)), 120_000);
    });
    try {
      const m = await Promise.race([
        new Promise((resolve) => {
          pending.set(++id, resolve);
          ws.send(JSON.stringify({ id, method, params }));
        }),
        closed,
        timeout,
      ]);
      if (m.error) throw new Error(`inspector: ${method}: ${m.error.message}`);
      return m.result;
    } finally {
      clearTimeout(timer);
    }
  };
  return { send, close: () => ws.close() };
}

/** Runs `fn` while the server's CPU profiler runs; the hottest functions and modules. */
async function profileWhile(inspector, fn, intervalUs = 500) {
  const dir = mkdtempSync(join(tmpdir(), "latchkey-bench-verify-prof-"));
  try {
    const s = await inspectorSession(inspector);
    let value;
    try {
      await s.send("Profiler.enable");
      await s.send("Profiler.setSamplingInterval", { interval: intervalUs });
      await s.send("Profiler.start");
      value = await fn();
      const { profile } = await s.send("Profiler.stop");
      writeFileSync(join(dir, "load.cpuprofile"), JSON.stringify(profile));
    } finally {
      s.close();
    }
    return { value, top: profileTop(dir, 20), byModule: profileByModule(dir, 15) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Forces a full GC in the server through its inspector, then reads its heap. */
async function gcAndHeap(inspector) {
  const s = await inspectorSession(inspector);
  try {
    await s.send("HeapProfiler.collectGarbage");
    await s.send("HeapProfiler.collectGarbage");
    return await s.send("Runtime.getHeapUsage");
  } finally {
    s.close();
  }
}

async function memoryPoint(lk, distinct, load) {
  const heap = await gcAndHeap(lk.inspector);
  const m = await metrics(lk.base);
  const p = {
    distinctKeys: distinct,
    heapUsedAfterGcMB: round(heap.usedSize / 2 ** 20, 1),
    heapUsedMetricMB: round(m.nodejs_heap_size_used_bytes / 2 ** 20, 1),
    rssMB: round(m.process_resident_memory_bytes / 2 ** 20, 1),
    ...(load ? { loadRps: load.rps, loadSeconds: load.seconds } : {}),
  };
  console.log(
    `after ${distinct} distinct keys: heap ${p.heapUsedAfterGcMB} MB after GC` +
      ` (metric ${p.heapUsedMetricMB} MB), RSS ${p.rssMB} MB` +
      (load ? ` (${load.rps} verifications/s)` : ""),
  );
  return p;
}

async function partMemory() {
  const db = await seededDatabase();
  const lk = await startLatchkey({
    env: {
      DATABASE_URL: db.url,
      CACHE_TTL_MS: "30000",
      CACHE_MAX_ENTRIES: String(cacheMaxEntries),
    },
    inspect: true,
  });
  try {
    await seededApi(db, lk.base);
    await seedMany(db, memoryKeys);
    const out = {
      storage: "postgresql",
      cacheMaxEntries,
      cacheTtlMs: 30000,
      keys: memoryKeys,
      note: "CACHE_MAX_ENTRIES bounds each in-process cache; verification records are one of them",
      points: [await memoryPoint(lk, 0)],
    };
    const step = Math.ceil(memoryKeys / 5);
    const codes = {};
    for (let from = 0; from < memoryKeys; from += step) {
      const total = Math.min(step, memoryKeys - from);
      const load = () =>
        spawnLoad({
          mode: "closed",
          url: `${lk.base}/v2/keys.verifyKey`,
          concurrency: 32,
          total,
          keys: { prefix: "bench_", from },
          expectCode: "VALID",
          maxSockets: 256,
        });
      let r;
      if (from + step < memoryKeys) r = await load();
      else {
        // The last step with the CPU profiler on: where a miss's time goes once the cache is full.
        const p = await profileWhile(lk.inspector, load, 1000);
        r = p.value;
        out.profileLastStep = { top: p.top, byModule: p.byModule };
        console.log("profile of the last step (self time):");
        for (const t of p.top.slice(0, 10)) {
          console.log(`  ${String(t.selfPercent).padStart(5)}%  ${t.fn}`);
        }
        console.log(`  ${p.byModule.map((m) => `${m.group} ${m.selfPercent}%`).join(", ")}`);
      }
      for (const [k, n] of Object.entries(r.codes)) codes[k] = (codes[k] ?? 0) + n;
      check(
        r.unexpectedCodes === 0 && r.errors === 0 && r.non2xx === 0,
        `memory: ${JSON.stringify(r)}`,
      );
      out.points.push(await memoryPoint(lk, from + total, r));
    }
    out.codes = codes;
    const first = out.points[1];
    const last = out.points.at(-1);
    out.heapGrowthFirstToLast = round(last.heapUsedAfterGcMB / first.heapUsedAfterGcMB);
    out.keysGrowthFirstToLast = round(last.distinctKeys / first.distinctKeys);
    out.rssGrowthFirstToLast = round(last.rssMB / first.rssMB);
    const full = Math.min(first.distinctKeys, cacheMaxEntries);
    out.approxBytesPerEntry = Math.round(
      ((first.heapUsedAfterGcMB - out.points[0].heapUsedAfterGcMB) * 2 ** 20) / full,
    );
    console.log(
      `heap x${out.heapGrowthFirstToLast} and RSS x${out.rssGrowthFirstToLast} while distinct keys` +
        ` grew x${out.keysGrowthFirstToLast} (cache bound ${cacheMaxEntries} entries,` +
        ` ~${out.approxBytesPerEntry} bytes of heap per cached record)`,
    );
    return out;
  } finally {
    await lk.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The run.

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !PARTS.includes(w));
if (unknown.length > 0) {
  console.error(`unknown part(s): ${unknown.join(", ")}; parts: ${PARTS.join(" ")}`);
  process.exit(2);
}
const chosen = wanted.length > 0 ? PARTS.filter((p) => wanted.includes(p)) : PARTS;
const run = {
  door: partDoor,
  propagation: partPropagation,
  "open-loop": partOpenLoop,
  credits: partCredits,
  scale: partScale,
  memory: partMemory,
};

/** What was measured: the commit, whether src/ differs from it, and when dist/ was built. */
function buildInfo() {
  const git = (...args) => {
    try {
      return execFileSync("git", args, { encoding: "utf8" }).trim();
    } catch {
      return null;
    }
  };
  return {
    commit: git("rev-parse", "--short", "HEAD"),
    srcChanged: git("status", "--porcelain", "--", "src") !== "",
    distBuiltAt: statSync(new URL("../dist/src/app.js", import.meta.url)).mtime.toISOString(),
  };
}

mkdirSync(results, { recursive: true });
const t0 = performance.now();
const report = {
  benchmark: "keys.verifyKey",
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model },
  runtime: process.version,
  build: buildInfo(),
  parts: chosen,
  settings: {
    seconds,
    openLoopSeconds,
    openLoopRate,
    propagationRounds,
    scaleSeconds,
    scaleRate,
    scaleKeys,
    memoryKeys,
    cacheMaxEntries,
  },
};
try {
  for (const part of chosen) {
    console.log(`\n== ${part}`);
    const tp = performance.now();
    try {
      report[part] = await run[part]();
    } catch (err) {
      console.error(err);
      report[part] = { error: String(err?.stack ?? err) };
      problems.push(`${part}: ${err?.message ?? err}`);
    }
    if (report[part]) report[part].partSeconds = round((performance.now() - tp) / 1000, 1);
  }
} finally {
  if (seeded) await dropDatabase(seeded.name).catch((e) => console.error(e));
  for (const name of ourDatabases) await dropDatabase(name).catch((e) => console.error(e));
}

// Targets.
const targets = [];
const target = (name, value, met) => targets.push({ name, value, met });
if (report.door?.ratios) {
  const r = report.door.ratios;
  target(
    "/v2 door / bare node:http (autocannon) >= 0.5",
    r.jsonDoorOfBareHttp,
    r.jsonDoorOfBareHttp >= 0.5,
  );
  target(
    "/v2 door / bare node:http (h2load --h1) >= 0.5",
    r.jsonDoorOfBareHttpNative,
    r.jsonDoorOfBareHttpNative >= 0.5,
  );
  target("gRPC grpc-js door / bare grpc-js >= 0.5", r.grpcJsOfBareGrpc, r.grpcJsOfBareGrpc >= 0.5);
}
if (report.propagation?.maxMs !== undefined) {
  const p = report.propagation;
  target("propagation to a second process < 1000 ms (p99)", p.p99Ms, p.p99Ms < 1000);
}
if (report["open-loop"]?.latchkey) {
  const o = report["open-loop"].latchkey;
  target(`open loop ${openLoopRate} req/s p99 < 2 ms`, o.p99Ms, o.p99Ms < 2);
  const ol = report["open-loop"];
  console.log(
    `  (bare node:http on the same schedule: p99 ${ol.bareHttp?.p99Ms} ms; server CPU per request` +
      ` bare / Latchkey ${ol.cpuPerRequestRatio}; a spinning process on the server's core had` +
      ` ${ol.preemption?.gapsOverMs[2]} gaps over 2 ms in 10 s)`,
  );
}
if (report.credits?.ratio !== undefined) {
  target("credits / no credits rate >= 0.3", report.credits.ratio, report.credits.ratio >= 0.3);
  target("credits exact", report.credits.exactness.exact, report.credits.exactness.exact);
}
if (report.scale?.p50Ratio !== undefined) {
  target(
    `cache off p50 ${scaleKeys} keys <= 3x ${SMALL_KEYS} keys`,
    report.scale.p50Ratio,
    report.scale.p50Ratio <= 3,
  );
}
if (report.memory?.heapGrowthFirstToLast !== undefined) {
  const m = report.memory;
  target(
    `heap bounded (x${m.keysGrowthFirstToLast} keys, heap growth < x1.5)`,
    m.heapGrowthFirstToLast,
    m.heapGrowthFirstToLast < 1.5,
  );
}
// Others may rebuild dist/ meanwhile (npm test does): later parts then ran the newer build.
const distNow = statSync(new URL("../dist/src/app.js", import.meta.url)).mtime.toISOString();
report.build.distRebuiltDuringRun = distNow !== report.build.distBuiltAt ? distNow : false;
if (report.build.distRebuiltDuringRun)
  console.log(`note: dist/ was rebuilt during the run (${distNow})`);
report.targets = targets;
report.problems = problems;
report.totalSeconds = round((performance.now() - t0) / 1000, 1);

const name = `verify-${report.date.slice(0, 19).replace(/[:T]/g, "-")}.json`;
writeFileSync(join(results, name), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(results, "verify-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
console.log("\n== summary");
for (const t of targets) {
  console.log(`${t.met ? "met   " : "MISSED"}  ${t.name}: ${t.value}`);
}
for (const p of problems) console.log(`problem: ${p}`);
console.log(`total ${report.totalSeconds} s; wrote bench/results/${name}`);
if (problems.length > 0) process.exitCode = 1;
