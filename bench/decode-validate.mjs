// decode-validate: the main-thread cost of the heaviest bodies the API accepts, before any
// handler runs. Each body goes through the functions the doors use: JSON.parse, the /v2 JSON
// decoding and the validation of the proto bounds (and, for the Connect binary door,
// fromBinary and the same validation). Every request pays this, including those then refused
// (401 comes first, but a 429 or a 400 from the handler comes after). Runs the built code
// (npm run build); prints milliseconds per body, warm, median and minimum.
//
//   BENCH_RUNS=50    measured runs per body (after as many warm-up runs)
import { randomBytes } from "node:crypto";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { MigrateKeysRequestSchema } from "../dist/gen/latchkey/v2/keys_pb.js";
import { acceptBareArray, decodeObject } from "../dist/src/server/json-codec.js";
import { validateMessage } from "../dist/src/server/validation.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const MAX_BODY = 1024 * 1024;
const desc = MigrateKeysRequestSchema;
const hash = () => randomBytes(32).toString("hex");

/** 100 keys with every list at its maximum, as in noisy-neighbour.mjs (~820 KB). */
function maximalLists() {
  const permissions = Array.from({ length: 1000 }, (_, i) => `p${String(i).padStart(3, "0")}`);
  const roles = Array.from({ length: 100 }, (_, i) => `role_${i}`);
  const ratelimits = [0, 1].map((i) => ({ name: `limit_${i}`, limit: 100, duration: 60_000 }));
  const keys = Array.from({ length: 100 }, () => ({
    hash: hash(),
    permissions,
    roles,
    ratelimits,
  }));
  return { migrationId: "noisy", apiId: "api_1", keys };
}

/** One key whose meta fills the body with tiny values (refused: larger than 64 KiB as JSON). */
const withMeta = (items) => ({
  migrationId: "noisy",
  apiId: "api_1",
  keys: [{ hash: hash(), meta: { a: items } }],
});

const bodies = {
  "migrateKeys, lists at their maximum": maximalLists(),
  "migrateKeys, meta of 450,000 numbers": withMeta(Array.from({ length: 450_000 }, () => 0)),
  "migrateKeys, meta of 90,000 objects": withMeta(Array.from({ length: 90_000 }, () => ({ b: 0 }))),
  "migrateKeys, meta of 200,000 strings": withMeta(Array.from({ length: 200_000 }, () => "x")),
};

function stats(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const med = sorted[sorted.length >> 1];
  return `median ${med.toFixed(1)} ms, min ${sorted[0].toFixed(1)} ms`;
}

function jsonDoor(body) {
  const t0 = performance.now();
  const json = JSON.parse(body.toString("utf8"));
  const t1 = performance.now();
  const out = [];
  const message = decodeObject(desc, acceptBareArray(desc, json), "", out);
  if (out.length === 0) validateMessage(desc, message, "", out);
  return { parse: t1 - t0, work: performance.now() - t1, out };
}

function binaryDoor(bytes) {
  const t0 = performance.now();
  const message = fromBinary(desc, bytes);
  const t1 = performance.now();
  const out = [];
  validateMessage(desc, message, "", out);
  return { parse: t1 - t0, work: performance.now() - t1, out };
}

for (const [name, value] of Object.entries(bodies)) {
  const body = Buffer.from(JSON.stringify(value));
  const message = decodeObject(desc, JSON.parse(body.toString("utf8")), "", []);
  const bytes = toBinary(desc, message);
  const doors = [["/v2 JSON", jsonDoor, body]];
  // A larger message cannot reach the Connect door: refused as too large before decoding.
  if (bytes.length <= MAX_BODY) doors.push(["Connect binary", binaryDoor, bytes]);
  for (const [door, run, input] of doors) {
    for (let i = 0; i < RUNS; i++) run(input);
    const runs = Array.from({ length: RUNS }, () => run(input));
    const verdict = runs[0].out.length === 0 ? "valid" : `400 at ${runs[0].out[0].location}`;
    console.log(
      `${name}, ${door} (${input.length} bytes, ${verdict}): ` +
        `decode+validate ${stats(runs.map((r) => r.work))}; ` +
        `${door === "/v2 JSON" ? "JSON.parse" : "fromBinary"} ${stats(runs.map((r) => r.parse))}`,
    );
  }
}
