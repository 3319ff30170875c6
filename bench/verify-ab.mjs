// CPU time per verification at a FIXED offered rate, two builds compared A/B/A/B: a cached key
// with one auto-applied rate limit, events on, PGlite, server pinned to core 0 and the
// open-loop generator (bench/open-loop.mjs) to core 1; the /v2 JSON door, then the gRPC port.
// At a fixed rate (not saturated) the server's CPU per request compares two builds without
// the generator's share of the machine, and p50/p99 are measured from the scheduled send time.
//
//   node bench/verify-ab.mjs <checkout A> <checkout B>   (each built with `npm run build`; run
//   through npm or with node_modules/.bin on the PATH: the servers run on this process's Node)
//
// Environment: AB_PAIRS=3, AB_RATE=2000 (req/s), AB_SECONDS=15 (after a 3 s warm-up),
// AB_DOORS=json,grpc (which loads), AB_PROFILE_DIR (when set, each server runs with --cpu-prof
// and writes its profile under <dir>/<A|B>-<pair>/).
// Writes bench/results/verify-ab-<time>.json (not committed) and prints a summary.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { start } from "./lib.mjs";
import { spawnLoadOn } from "./open-loop.mjs";

const env = process.env;
const pairs = Number(env.AB_PAIRS ?? 3);
const rate = Number(env.AB_RATE ?? 2000);
const seconds = Number(env.AB_SECONDS ?? 15);
const doors = (env.AB_DOORS ?? "json,grpc").split(",");
const profileDir = env.AB_PROFILE_DIR;
const rootKey = "bench_root_key_0123456789abcdef";
const checkouts = process.argv.slice(2, 4).map((d) => resolve(d));
if (checkouts.length !== 2) throw new Error("usage: verify-ab.mjs <checkout A> <checkout B>");

/** One length-prefixed VerifyKeyRequest { key } (field 1, length-delimited), base64. */
function grpcFrame(key) {
  const k = Buffer.from(key);
  const msg = Buffer.concat([Buffer.from([0x0a, k.length]), k]);
  const frame = Buffer.alloc(5 + msg.length);
  frame.writeUInt32BE(msg.length, 1);
  msg.copy(frame, 5);
  return frame.toString("base64");
}

async function call(base, procedure, body, anonymous = false) {
  const res = await fetch(`${base}/v2/${procedure}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(anonymous ? {} : { authorization: `Bearer ${rootKey}` }),
    },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${procedure}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()).data;
}

/** latchkey_verifications_total by code. */
async function codes(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = {};
  for (const m of text.matchAll(/^latchkey_verifications_total\{code="(\w+)"\} (\S+)/gm)) {
    out[m[1]] = Number(m[2]);
  }
  return out;
}

/** One server from `dir`: the /v2 door then the gRPC port at `rate`, CPU per request of each. */
async function runOne(dir, tag) {
  const dataDir = mkdtempSync(join(tmpdir(), "latchkey-bench-ab-"));
  const main = join(dir, "dist/src/cli/main.js");
  const lk = await start(
    "taskset",
    [
      "-c",
      "0",
      process.execPath,
      ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, tag)}`] : []),
      main,
      "serve",
    ],
    { PORT: "0", GRPC_PORT: "0", HOST: "127.0.0.1", ROOT_KEY: rootKey, DATA_DIR: dataDir },
    /"port":(\d+),"grpcPort":(\d+)[^\n]*latchkey listening/,
  );
  try {
    const base = `http://127.0.0.1:${lk.match[1]}`;
    const { apiId } = await call(base, "apis.createApi", { name: "bench" });
    const ratelimits = [{ name: "requests", limit: 1_000_000_000, duration: 60_000 }];
    const { key } = await call(base, "keys.createKey", { apiId, ratelimits });
    const first = await call(base, "keys.verifyKey", { key }, true);
    if (first.code !== "VALID" || !first.ratelimits?.[0]?.autoApply) {
      throw new Error(`first answer ${JSON.stringify(first)}`);
    }
    const common = { rate, seconds, warmupSeconds: 3, maxSockets: 64 };
    const before = await codes(base);
    const json = !doors.includes("json")
      ? null
      : await spawnLoadOn(
          lk.child.pid,
          {
            ...common,
            url: `${base}/v2/keys.verifyKey`,
            body: JSON.stringify({ key }),
            expectCode: "VALID",
          },
          { cpu: 1 },
        );
    const grpcPort = lk.match[2];
    const grpc = !doors.includes("grpc")
      ? null
      : await spawnLoadOn(
          lk.child.pid,
          {
            ...common,
            url: `http://127.0.0.1:${grpcPort}/latchkey.v2.KeysService/VerifyKey`,
            grpc: { body: grpcFrame(key) },
          },
          { cpu: 1 },
        );
    const after = await codes(base);
    const notValid = Object.keys(after).filter((c) => c !== "VALID" && after[c] !== before[c]);
    const bad = [json, grpc].some(
      (r) => r && (r.lost || r.errors || r.non2xx || r.unexpectedCodes),
    );
    if (notValid.length > 0 || bad) throw new Error(`answers not all VALID: ${notValid} ${bad}`);
    return { json: summary(json), grpc: summary(grpc) };
  } finally {
    await lk.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const summary = (r) =>
  r && {
    cpuUsPerRequest: r.server.cpuUsPerRequest,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    achievedRate: r.achievedRate,
    preempted: r.server.involuntarySwitches,
  };

const median = (xs) => xs.toSorted((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const runs = { A: [], B: [] };
for (let p = 0; p < pairs; p++) {
  for (const [name, dir] of [
    ["A", checkouts[0]],
    ["B", checkouts[1]],
  ]) {
    const r = await runOne(dir, `${name}-${p + 1}`);
    runs[name].push(r);
    console.log(`pair ${p + 1} ${name}: ${JSON.stringify(r)}`);
  }
}
const out = {
  node: process.version,
  rate,
  seconds,
  pairs,
  checkouts,
  runs,
  medians: {},
  ratios: {},
};
for (const door of doors) {
  for (const name of ["A", "B"]) {
    const rs = runs[name].map((r) => r[door]);
    out.medians[`${name} ${door}`] = {
      cpuUsPerRequest: median(rs.map((r) => r.cpuUsPerRequest)),
      p50Ms: median(rs.map((r) => r.p50Ms)),
      p99Ms: median(rs.map((r) => r.p99Ms)),
    };
  }
  out.ratios[door] = runs.A.map(
    (a, i) => Math.round((100 * a[door].cpuUsPerRequest) / runs.B[i][door].cpuUsPerRequest) / 100,
  );
}
console.log(JSON.stringify({ medians: out.medians, cpuRatiosAoverB: out.ratios }, null, 1));
const dir = new URL("./results/", import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
writeFileSync(
  join(dir, `verify-ab-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
  JSON.stringify(out, null, 1),
);
