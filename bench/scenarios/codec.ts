// What generating the /v2 codec and the validator per message type buys on the hot path: each
// operation timed the generic way (the descriptor walk the server used before, kept in
// test/generic-codec/ as the oracle of the equivalence test) and the generated way, alternately,
// `rounds` times (median ns per operation), in process, on the built server's modules.
//
//   npm run bench -- codec [encode] [verify] [create]
//
// encode   encodeJson of a keys.verifyKey answer as its handler makes it (VALID, one rate
//          limit), beside JSON.stringify of the same answer as a plain object, for scale; each
//          with the Buffer.byteLength the door takes of it, which joins the pieces of a string
//          built by `+` into one (JSON.stringify writes one piece): a part of the cost to count
// verify   decodeObject + validateMessage of a parsed keys.verifyKey body, {"key": ...}
// create   the same for a keys.createKey body with every kind of field
import type { DescMessage } from "@bufbuild/protobuf";
import type * as KeysPb from "../../gen/latchkey/v2/keys_pb.ts";
import type * as OptionsPb from "../../gen/latchkey/v2/options_pb.ts";
import type * as FieldRules from "../../src/domain/field-rules.ts";
import type * as Networks from "../../src/domain/networks.ts";
import type * as ServiceErrors from "../../src/errors/service-error.ts";
import type { Violation } from "../../src/errors/service-error.ts";
import type * as JsonCodec from "../../src/server/json-codec.ts";
import type * as Presence from "../../src/server/presence.ts";
import type * as Validation from "../../src/server/validation.ts";
import { genericJsonCodec } from "../../test/generic-codec/json-codec.ts";
import { genericValidator } from "../../test/generic-codec/validation.ts";
import { alternate, type Op } from "../lib/alternate.ts";
import { fromDist } from "../lib/dist.ts";
import { num, table } from "../lib/markdown.ts";
import { chosenParts, defineScenario, setting } from "../lib/scenario.ts";
import { round } from "../lib/stats.ts";

const PARTS = ["encode", "verify", "create"] as const;
type Part = (typeof PARTS)[number];

export interface CodecSettings {
  parts: Part[];
  rounds: number;
  operations: number;
}

export interface CodecComparison {
  name: string;
  genericNs: number;
  generatedNs: number;
  savedNs: number;
  /** JSON.stringify of the same answer as a plain object (encode only). */
  stringifyNs?: number;
  spread: { generic: number[]; generated: number[] };
}

export interface CodecResult {
  comparisons: CodecComparison[];
}

let sink = 0;

/** What both ways are given and must agree on. */
interface Subject {
  name: string;
  generic: Op;
  generated: Op;
  /** The JSON.stringify of the same work, for scale. */
  reference?: Op;
}

const BODIES = {
  verify: { key: "sk_3ZbQ8xW1mJ9vK2pT7nR4cY6h" },
  create: {
    apiId: "api_4kT8vN2qR7xW",
    prefix: "sk_live",
    name: "checkout service",
    byteLength: 24,
    externalId: "user_8412",
    meta: { plan: "pro", region: "eu-west-1", seats: 12 },
    roles: ["admin", "billing"],
    permissions: ["api.read", "api.write", "billing.read"],
    expires: 4_000_000_000_000,
    credits: { remaining: 1000, refill: { interval: "monthly", amount: 1000, refillDay: 1 } },
    ratelimits: [
      { name: "requests", limit: 100, duration: 60_000, autoApply: true },
      { name: "tokens", limit: 10_000, duration: 3_600_000 },
    ],
    enabled: true,
  },
};

async function subjects(
  check: (ok: boolean, problem: string) => boolean,
): Promise<Record<Part, Subject>> {
  const keys = await fromDist<typeof KeysPb>("gen/latchkey/v2/keys_pb.js");
  const codec = await fromDist<typeof JsonCodec>("src/server/json-codec.js");
  const { validateMessage } = await fromDist<typeof Validation>("src/server/validation.js");
  const { errors } = await fromDist<typeof ServiceErrors>("src/errors/service-error.js");
  const deps = {
    options: await fromDist<typeof OptionsPb>("gen/latchkey/v2/options_pb.js"),
    fieldRules: await fromDist<typeof FieldRules>("src/domain/field-rules.js"),
    networks: await fromDist<typeof Networks>("src/domain/networks.js"),
    presence: await fromDist<typeof Presence>("src/server/presence.js"),
    unexpected: errors.unexpected,
  };
  const old = { ...genericJsonCodec(deps), ...genericValidator(deps) };
  // The answer keyData makes for a named key with one rate limit, with the meta the
  // request-context interceptor adds.
  const answer = {
    meta: { $typeName: "latchkey.v2.ResponseMeta", requestId: "req_2mXq8ZbT4vN7kR1w" },
    data: {
      valid: true,
      code: keys.VerifyKeyCode.VALID,
      keyId: "key_9Hs2LqW8xT4v",
      enabled: true,
      permissions: [] as string[],
      roles: [] as string[],
      ratelimits: [
        {
          id: "rl_7Gf3Kp1Zq",
          name: "requests",
          limit: 100n,
          duration: 60_000n,
          remaining: 99n,
          reset: 1_790_000_060_000n,
          exceeded: false,
          autoApply: true,
        },
      ],
      name: "checkout service",
    },
  };
  const desc = keys.VerifyKeyResponseSchema;
  const plain = JSON.parse(codec.encodeJson(desc, answer));
  const now: Way = { ...codec, validateMessage };
  const agree = (body: unknown, d: DescMessage) =>
    JSON.stringify(checked(old, d, body)) === JSON.stringify(checked(now, d, body));
  check(
    old.encodeJson(desc, answer) === codec.encodeJson(desc, answer),
    "the generic and generated encoders write different text",
  );
  check(agree(BODIES.verify, keys.VerifyKeyRequestSchema), "verifyKey bodies decode differently");
  check(agree(BODIES.create, keys.CreateKeyRequestSchema), "createKey bodies decode differently");
  return {
    encode: {
      name: "encode a keys.verifyKey answer",
      generic: (n) => {
        for (let i = 0; i < n; i++) sink += Buffer.byteLength(old.encodeJson(desc, answer));
      },
      generated: (n) => {
        for (let i = 0; i < n; i++) sink += Buffer.byteLength(codec.encodeJson(desc, answer));
      },
      reference: (n) => {
        for (let i = 0; i < n; i++) sink += Buffer.byteLength(JSON.stringify(plain));
      },
    },
    verify: {
      name: "decode + validate a keys.verifyKey body",
      generic: decodeValidate(old, keys.VerifyKeyRequestSchema, BODIES.verify),
      generated: decodeValidate(now, keys.VerifyKeyRequestSchema, BODIES.verify),
    },
    create: {
      name: "decode + validate a keys.createKey body",
      generic: decodeValidate(old, keys.CreateKeyRequestSchema, BODIES.create),
      generated: decodeValidate(now, keys.CreateKeyRequestSchema, BODIES.create),
    },
  };
}

/** A decoder and validator: the generic ones or the generated ones. */
interface Way {
  decodeObject(desc: DescMessage, json: unknown, pointer: string, out: Violation[]): object;
  validateMessage(desc: DescMessage, message: never, pointer: string, out: Violation[]): void;
}

/** The violations of a body (none for those above: both must accept them). */
function checked(way: Way, desc: DescMessage, body: unknown): Violation[] {
  const out: Violation[] = [];
  const message = way.decodeObject(desc, body, "", out);
  if (out.length === 0) way.validateMessage(desc, message as never, "", out);
  return out;
}

/** The door's work on a parsed body, `n` times. */
function decodeValidate(way: Way, desc: DescMessage, body: unknown): Op {
  return (n) => {
    for (let i = 0; i < n; i++) sink += checked(way, desc, body).length;
  };
}

export default defineScenario<CodecSettings, CodecResult>({
  name: "codec",
  description: "the /v2 codec and validator: generic descriptor walk vs generated per message",
  settings: ({ quick, args }) => {
    return {
      parts: chosenParts("codec", PARTS, args),
      rounds: setting("BENCH_ROUNDS", 9, 3, quick),
      operations: setting("BENCH_OPERATIONS", 300_000, 30_000, quick),
    };
  },
  async run({ settings, check }) {
    const all = await subjects(check);
    const comparisons: CodecComparison[] = [];
    for (const part of settings.parts) {
      const s = all[part];
      const ways = s.reference ? [s.generic, s.generated, s.reference] : [s.generic, s.generated];
      const { ns, spread } = await alternate(settings.rounds, settings.operations, ways);
      const [genericNs = Number.NaN, generatedNs = Number.NaN, stringifyNs] = ns;
      const c: CodecComparison = {
        name: s.name,
        genericNs,
        generatedNs,
        savedNs: round(genericNs - generatedNs, 1),
        ...(stringifyNs === undefined ? {} : { stringifyNs }),
        spread: { generic: spread[0] ?? [], generated: spread[1] ?? [] },
      };
      console.log(JSON.stringify(c));
      comparisons.push(c);
    }
    console.log(`node ${process.version}; sink ${sink > 0}`);
    return { comparisons };
  },
  render: (r) =>
    table(
      ["operation", "generic:", "generated:", "saved per operation:", "JSON.stringify, for scale:"],
      r.comparisons.map((c) => [
        c.name,
        `${num(c.genericNs, 0)} ns`,
        `${num(c.generatedNs, 0)} ns`,
        `${num(c.savedNs, 0)} ns`,
        c.stringifyNs === undefined ? "" : `${num(c.stringifyNs, 0)} ns`,
      ]),
    ),
});
