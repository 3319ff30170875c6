import { readdirSync } from "node:fs";
import {
  create,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
  getOption,
  hasOption,
  ScalarType,
  toBinary,
} from "@bufbuild/protobuf";
import fc from "fast-check";
import { json_value as jsonValue } from "../../gen/latchkey/v2/options_pb.js";
import type { Violation } from "../../src/errors/service-error.js";
import { decodeObject } from "../../src/server/json-codec.js";

/**
 * What the door fuzzer sends: JSON values shaped like a procedure's request (right and
 * wrong kinds), arbitrary JSON, text that is not JSON or not UTF-8, and protobuf bytes
 * (valid, mutated, random, nested past the decoder's limit).
 */

/** Every service of the generated contract, found by scanning gen/, not listed by hand. */
export async function generatedServices(): Promise<DescService[]> {
  const dir = new URL("../../gen/latchkey/v2/", import.meta.url);
  const found: DescService[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith("_pb.ts"))
    .sort()) {
    const mod = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    for (const v of Object.values(mod)) {
      if ((v as { kind?: unknown } | null)?.kind === "service") found.push(v as DescService);
    }
  }
  return found;
}

const PROTOTYPE_KEYS = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

const oddStrings = fc.constantFrom(
  "",
  "\u0000",
  "\uD800",
  "x\uDBFF",
  "🔑",
  "\u202Eevil",
  "' or 1=1 --",
  "*.*.*",
  "api_",
  "key_missing",
  ...PROTOTYPE_KEYS,
);

const strings = fc.oneof(
  { arbitrary: fc.string({ maxLength: 20 }), weight: 3 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 20 }), weight: 1 },
  { arbitrary: oddStrings, weight: 2 },
  {
    arbitrary: fc.integer({ min: 200, max: 20_000 }).map((n) => "a".repeat(n)),
    weight: 1,
  },
);

const numbers = fc.oneof(
  fc.constantFrom(1e308, -1e308, -0, 2 ** 64, -(2 ** 63), 2 ** 53, 2 ** 31, -1, 0.5, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const scalars = fc.oneof(strings, numbers, fc.boolean(), fc.constant(null));

/** A value wrapped in 40 to 400 arrays or objects. */
const deep = fc
  .tuple(fc.integer({ min: 40, max: 400 }), fc.boolean(), scalars)
  .map(([depth, asArray, leaf]) => {
    let v: unknown = leaf;
    for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
    return v;
  });

/** An object with one of the prototype names as an own key. */
const prototypeKeyed = fc
  .tuple(fc.constantFrom(...PROTOTYPE_KEYS), scalars)
  .map(([k, v]) => JSON.parse(`{${JSON.stringify(k)}: ${JSON.stringify(v)}}`) as unknown);

/** Arbitrary JSON: scalars, deep nesting, prototype keys, arrays and objects of those. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3 },
    scalars,
    deep,
    prototypeKeyed,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), oddStrings), tie("value"), {
      maxKeys: 4,
    }),
  ),
})).value;

const ID_PREFIXES: Record<string, string> = {
  apiId: "api",
  keyId: "key",
  roleId: "role",
  identityId: "id",
  permissionId: "perm",
  namespaceId: "rlns",
  overrideId: "rlor",
};

/** A string that passes the usual bounds (an id with its prefix, a slug), to get past validation. */
function plausible(f: DescField): fc.Arbitrary<string> {
  const prefix = ID_PREFIXES[f.jsonName];
  const text = fc.string({ unit: alnum, minLength: prefix ? 8 : 3, maxLength: 20 });
  return prefix ? text.map((t) => `${prefix}_${t}`) : text;
}

const alnum = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789_.");

/** One or two fields with plausible values only: bodies that often pass validation. */
export function plausibleJson(desc: DescMessage): fc.Arbitrary<Record<string, unknown>> {
  const simple = desc.fields.filter((f) => f.fieldKind === "scalar" || f.fieldKind === "enum");
  if (simple.length === 0) return fc.constant({});
  const value = (f: DescField): fc.Arbitrary<unknown> => {
    if (f.enum) return fc.constantFrom(...enumStrings(f).filter((v) => !v.endsWith("UNSPECIFIED")));
    if (f.scalar === ScalarType.STRING) return plausible(f);
    if (f.scalar === ScalarType.BOOL) return fc.boolean();
    return fc.integer({ min: 1, max: 100_000 });
  };
  return fc
    .subarray(simple, { minLength: 1, maxLength: Math.min(3, simple.length) })
    .chain((fields) => fc.record(Object.fromEntries(fields.map((f) => [f.jsonName, value(f)]))));
}

function enumStrings(f: DescField): string[] {
  const e = f.enum;
  if (!e) return [];
  return e.values.map((v) => (hasOption(v, jsonValue) ? getOption(v, jsonValue) : v.name));
}

/** A value of the right JSON kind for one item of a field, now and then a wrong one. */
function item(f: DescField, depth: number): fc.Arbitrary<unknown> {
  let right: fc.Arbitrary<unknown>;
  if (f.enum) right = fc.constantFrom(...enumStrings(f), "NOT_A_VALUE");
  else if (f.message?.typeName === "google.protobuf.Struct") right = anyJson;
  else if (f.message) right = depth > 0 ? requestJson(f.message, depth - 1) : fc.constant({});
  else if (f.scalar === ScalarType.STRING) right = fc.oneof(plausible(f), strings);
  else if (f.scalar === ScalarType.BOOL) right = fc.boolean();
  else right = numbers;
  return fc.oneof({ arbitrary: right, weight: 5 }, { arbitrary: anyJson, weight: 1 });
}

/** A JSON object with some of the message's fields (lowerCamel names), plus now and then an unknown one. */
export function requestJson(desc: DescMessage, depth = 2): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.fromEntries(
    desc.fields.map((f) => [
      f.jsonName,
      f.fieldKind === "list"
        ? fc.oneof(
            fc.array(item(f, depth), { maxLength: 5 }),
            fc
              .tuple(item(f, 0), fc.integer({ min: 100, max: 3000 }))
              .map(([v, n]) => Array(n).fill(v)),
          )
        : item(f, depth),
    ]),
  );
  const known = fc.record(fields, { requiredKeys: [] });
  return fc
    .tuple(known, fc.option(fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS, "unknownField"), scalars)))
    .map(([body, extra]) => {
      if (!extra) return body;
      const out = { ...body };
      Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true });
      return out;
    });
}

/** Text bodies that are not JSON, or not the JSON that JSON.stringify writes. */
const notJson = fc.constantFrom(
  "",
  "{",
  "null",
  "[]",
  '"text"',
  '{"limit": NaN}',
  '{"limit": Infinity}',
  '{"limit": -Infinity}',
  '{"limit": 1e999}',
  '{"limit": -1e999}',
  `{"limit": ${"9".repeat(400)}}`,
  '{"a": 1}{"b": 2}',
  '{"name": "x", "name": "y"}',
);

const encoder = new TextEncoder();

/** Bytes of a JSON body: a request-shaped value, any JSON, broken text, or invalid UTF-8. */
export function jsonBodies(method: DescMethod): fc.Arbitrary<Uint8Array> {
  const invalidUtf8 = fc
    .tuple(
      fc.constantFrom(...method.input.fields.map((f) => f.jsonName), "x"),
      fc.uint8Array({ minLength: 1, maxLength: 8 }),
    )
    .map(([name, bytes]) => {
      const head = encoder.encode(`{"${name}":"`);
      return Buffer.concat([head, Buffer.from([0xff, 0xfe]), bytes, encoder.encode('"}')]);
    });
  return fc.oneof(
    {
      arbitrary: requestJson(method.input).map((v) => encoder.encode(JSON.stringify(v))),
      weight: 4,
    },
    {
      arbitrary: plausibleJson(method.input).map((v) => encoder.encode(JSON.stringify(v))),
      weight: 3,
    },
    { arbitrary: anyJson.map((v) => encoder.encode(JSON.stringify(v) ?? "")), weight: 2 },
    { arbitrary: notJson.map((t) => encoder.encode(t)), weight: 1 },
    { arbitrary: invalidUtf8, weight: 1 },
  );
}

/** Protobuf bytes of a request-shaped value that the /v2 codec accepts (else an empty message). */
function validBinary(method: DescMethod): fc.Arbitrary<Uint8Array> {
  return fc.oneof(requestJson(method.input), plausibleJson(method.input)).map((json) => {
    const out: Violation[] = [];
    const message = decodeObject(method.input, json, "", out);
    return toBinary(method.input, out.length === 0 ? (message as never) : create(method.input));
  });
}

/** A string field carrying bytes that are not UTF-8, as protobuf. */
function invalidUtf8Binary(method: DescMethod): fc.Arbitrary<Uint8Array> {
  const numbers = method.input.fields.map((f) => f.number);
  return fc.constantFrom(...numbers, 1).map((n) => {
    const tag = (n << 3) | 2;
    return Uint8Array.from([...varint(tag), 3, 0xff, 0xfe, 0xc3]);
  });
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** Unknown field 15 opened as a group 50 to 3000 times: nesting the decoder must bound. */
const nestedGroups = fc.integer({ min: 50, max: 3000 }).map((n) => new Uint8Array(n).fill(0x7b));

/** Protobuf bodies: valid, truncated, with a byte changed, random, nested, not UTF-8. */
export function binaryBodies(method: DescMethod): fc.Arbitrary<Uint8Array> {
  const valid = validBinary(method);
  const mutated = fc
    .tuple(valid, fc.nat(), fc.nat({ max: 255 }), fc.boolean())
    .map(([bytes, at, value, truncate]) => {
      if (bytes.length === 0) return Uint8Array.from([value]);
      const i = at % bytes.length;
      if (truncate) return bytes.subarray(0, i);
      const copy = Uint8Array.from(bytes);
      copy[i] = value;
      return copy;
    });
  return fc.oneof(
    { arbitrary: valid, weight: 3 },
    { arbitrary: mutated, weight: 3 },
    { arbitrary: fc.uint8Array({ maxLength: 300 }), weight: 2 },
    { arbitrary: nestedGroups, weight: 1 },
    { arbitrary: invalidUtf8Binary(method), weight: 1 },
  );
}

/** How a gRPC or gRPC-web body is framed: mostly right, sometimes not. */
export const framings = fc.constantFrom(
  "envelope",
  "envelope",
  "envelope",
  "raw",
  "compressed-flag",
  "short-length",
  "two-messages",
);
