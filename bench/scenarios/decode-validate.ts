// The main-thread cost of the heaviest bodies the API accepts, before any handler runs: each
// body through the functions the doors use (JSON.parse, the /v2 JSON decoding and the
// validation of the proto bounds; for the Connect binary door, fromBinary and the same
// validation). Every request pays this, those then refused included. Median and minimum of
// warm runs, in process (no server).
import { randomBytes } from "node:crypto";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type * as KeysPb from "../../gen/latchkey/v2/keys_pb.ts";
import type * as JsonCodec from "../../src/server/json-codec.ts";
import type * as Validation from "../../src/server/validation.ts";
import { fromDist } from "../lib/dist.ts";
import { ms, table } from "../lib/markdown.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { median, round } from "../lib/stats.ts";

export interface DecodeValidateSettings {
  runs: number;
}

export interface DecodeRun {
  body: string;
  door: "/v2 JSON" | "Connect binary";
  bytes: number;
  /** `valid`, or where the first 400 points. */
  verdict: string;
  /** Decode and validate, after the parse. */
  workMedianMs: number;
  workMinMs: number;
  /** JSON.parse or fromBinary. */
  parseMedianMs: number;
}

export interface DecodeValidateResult {
  runs: DecodeRun[];
}

const MAX_BODY = 1024 * 1024;
const hash = () => randomBytes(32).toString("hex");

/** The bodies: 100 keys with every list at its maximum, and metas that fill a body. */
function bodies(): Record<string, unknown> {
  const permissions = Array.from({ length: 1000 }, (_, i) => `p${String(i).padStart(3, "0")}`);
  const roles = Array.from({ length: 100 }, (_, i) => `role_${i}`);
  const ratelimits = [0, 1].map((i) => ({ name: `limit_${i}`, limit: 100, duration: 60_000 }));
  const keys = Array.from({ length: 100 }, () => ({
    hash: hash(),
    permissions,
    roles,
    ratelimits,
  }));
  const withMeta = (items: unknown[]) => ({
    migrationId: "noisy",
    apiId: "api_1",
    keys: [{ hash: hash(), meta: { a: items } }],
  });
  return {
    "migrateKeys, lists at their maximum": { migrationId: "noisy", apiId: "api_1", keys },
    "migrateKeys, meta of 450,000 numbers": withMeta(Array.from({ length: 450_000 }, () => 0)),
    "migrateKeys, meta of 90,000 objects": withMeta(
      Array.from({ length: 90_000 }, () => ({ b: 0 })),
    ),
    "migrateKeys, meta of 200,000 strings": withMeta(Array.from({ length: 200_000 }, () => "x")),
  };
}

export default defineScenario<DecodeValidateSettings, DecodeValidateResult>({
  name: "decode-validate",
  description: "decoding and validating the heaviest bodies the API accepts, per door",
  settings: ({ quick, args }) => {
    noArgs("decode-validate", args);
    return { runs: setting("BENCH_RUNS", 50, 5, quick) };
  },
  async run({ settings }) {
    const { MigrateKeysRequestSchema: desc } = await fromDist<typeof KeysPb>(
      "gen/latchkey/v2/keys_pb.js",
    );
    const { acceptBareArray, decodeObject } = await fromDist<typeof JsonCodec>(
      "src/server/json-codec.js",
    );
    const { validateMessage } = await fromDist<typeof Validation>("src/server/validation.js");
    type Problems = Parameters<typeof validateMessage>[3];
    const jsonDoor = (input: Buffer) => {
      const t0 = performance.now();
      const json = JSON.parse(input.toString("utf8"));
      const t1 = performance.now();
      const out: Problems = [];
      const message = decodeObject(desc, acceptBareArray(desc, json), "", out);
      if (out.length === 0) validateMessage(desc, message, "", out);
      return { parse: t1 - t0, work: performance.now() - t1, out };
    };
    const binaryDoor = (input: Buffer) => {
      const t0 = performance.now();
      const message = fromBinary(desc, input);
      const t1 = performance.now();
      const out: Problems = [];
      validateMessage(desc, message, "", out);
      return { parse: t1 - t0, work: performance.now() - t1, out };
    };
    const runs: DecodeRun[] = [];
    for (const [name, value] of Object.entries(bodies())) {
      const json = Buffer.from(JSON.stringify(value));
      // The decoder's output is the message protobuf-es creates, typed loosely.
      const message = decodeObject(desc, value, "", []) as unknown as KeysPb.MigrateKeysRequest;
      const bytes = Buffer.from(toBinary(desc, message));
      const doors = [["/v2 JSON", jsonDoor, json] as const];
      // A larger message cannot reach the Connect door: refused as too large before decoding.
      const all =
        bytes.length <= MAX_BODY
          ? [...doors, ["Connect binary", binaryDoor, bytes] as const]
          : doors;
      for (const [door, fn, input] of all) {
        for (let i = 0; i < settings.runs; i++) fn(input);
        const timed = Array.from({ length: settings.runs }, () => fn(input));
        const first = timed[0]?.out[0];
        const r: DecodeRun = {
          body: name,
          door,
          bytes: input.length,
          verdict: first ? `400 at ${first.location}` : "valid",
          workMedianMs: round(median(timed.map((t) => t.work)), 2),
          workMinMs: round(Math.min(...timed.map((t) => t.work)), 2),
          parseMedianMs: round(median(timed.map((t) => t.parse)), 2),
        };
        console.log(
          `${name}, ${door} (${r.bytes} bytes, ${r.verdict}): decode+validate median ${r.workMedianMs} ms, min ${r.workMinMs} ms; parse ${r.parseMedianMs} ms`,
        );
        runs.push(r);
      }
    }
    return { runs };
  },
  render: (r) =>
    table(
      [
        "body",
        "door",
        "bytes:",
        "verdict",
        "decode + validate, median (min):",
        "JSON.parse / fromBinary:",
      ],
      r.runs.map((x) => [
        x.body,
        x.door,
        x.bytes,
        x.verdict,
        `${ms(x.workMedianMs, 1)} (${ms(x.workMinMs, 1)})`,
        ms(x.parseMedianMs, 1),
      ]),
    ),
});
