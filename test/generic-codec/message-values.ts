import {
  type DescField,
  type DescMessage,
  type DescService,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import fc from "fast-check";
import { json_value as jsonValue } from "../../gen/latchkey/v2/options_pb.js";
import { anyJson, plausibleJson, requestJson } from "../fuzz/arbitraries.js";

/**
 * Values of every kind a message type of the contract can meet on its way through the /v2
 * codec and the validator: typed init shapes (what handlers answer with, and what create()
 * makes messages of) and JSON bodies, right and wrong.
 */

/** Every message type the services' requests and responses reach, nested ones included. */
export function contractMessages(services: readonly DescService[]): DescMessage[] {
  const found = new Map<string, DescMessage>();
  const visit = (d: DescMessage) => {
    if (found.has(d.typeName) || !d.typeName.startsWith("latchkey.")) return;
    found.set(d.typeName, d);
    for (const f of d.fields) if (f.message) visit(f.message);
  };
  for (const s of services) {
    for (const m of s.methods) {
      visit(m.input);
      visit(m.output);
    }
  }
  return [...found.values()];
}

const INT64 = 2n ** 63n;

/** A value of one scalar type as protobuf-es holds it, edge values included. */
function scalarValue(type: ScalarType): fc.Arbitrary<unknown> {
  switch (type) {
    case ScalarType.STRING:
      return fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.string({ unit: "binary", maxLength: 6 }),
        fc.constantFrom("", "\u0000", "\uD800", '"q"\n\\', "\u2028", "🔑", "__proto__"),
      );
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return fc.double();
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 4 });
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return fc.integer();
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.oneof(fc.bigInt({ min: 0n, max: 2n * INT64 - 1n }), fc.constantFrom(0n, 1n));
    default:
      return fc.oneof(fc.bigInt({ min: -INT64, max: INT64 - 1n }), fc.constantFrom(0n, -1n));
  }
}

/** One value (one item, for a list) of a field, as an init shape holds it. */
function fieldValue(f: DescField, depth: number): fc.Arbitrary<unknown> {
  if (f.enum) return fc.constantFrom(...f.enum.values.map((v) => v.number), 999);
  if (f.message?.typeName === "google.protobuf.Struct") {
    return fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), {
      maxKeys: 4,
    });
  }
  if (f.message) return depth > 0 ? messageInit(f.message, depth - 1) : fc.constant({});
  return scalarValue(f.scalar as ScalarType);
}

/**
 * A typed init shape of `desc`: any of its fields, each sometimes present as `undefined`
 * (a handler's `cost: undefined`), lists of 0 to 4 items.
 */
export function messageInit(desc: DescMessage, depth = 2): fc.Arbitrary<Record<string, unknown>> {
  const fields = desc.fields
    .filter((f) => f.fieldKind !== "map")
    .map((f) => {
      const one =
        f.fieldKind === "list"
          ? fc.array(fieldValue(f, depth), { maxLength: 4 })
          : fieldValue(f, depth);
      return [f.localName, fc.option(one, { nil: undefined, freq: 6 })] as const;
    });
  return fc.record(Object.fromEntries(fields), { requiredKeys: [] }) as fc.Arbitrary<
    Record<string, unknown>
  >;
}

/** The documented strings of an enum field, as a body sends them. */
function enumStrings(f: DescField): string[] {
  return (f.enum?.values ?? []).map((v) =>
    hasOption(v, jsonValue) ? getOption(v, jsonValue) : v.name,
  );
}

/**
 * A JSON object whose keys mix the field's JSON names, proto names, `updateMask` and
 * prototype names, with values of any kind: the keys the decoder tells apart.
 */
function mixedKeys(desc: DescMessage): fc.Arbitrary<Record<string, unknown>> {
  const names = desc.fields.flatMap((f) => [f.jsonName, f.name]);
  const strings = desc.fields.flatMap(enumStrings);
  const value = fc.oneof(
    anyJson,
    fc.constant(null),
    fc.constantFrom(...strings, "x"),
    fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null), fc.integer()), {
      maxLength: 3,
    }),
  );
  const key = fc.constantFrom(...names, "updateMask", "update_mask", "__proto__", "a/b~c");
  return fc.array(fc.tuple(key, value), { maxLength: 6 }).map((pairs) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of pairs)
      Object.defineProperty(out, k, {
        value: v,
        enumerable: true,
        configurable: true,
        writable: true,
      });
    return out;
  });
}

/** A body for `desc`: request-shaped, plausible, mixed keys, or any JSON at all. */
export function jsonBody(desc: DescMessage): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: requestJson(desc), weight: 4 },
    { arbitrary: plausibleJson(desc), weight: 2 },
    { arbitrary: mixedKeys(desc), weight: 3 },
    { arbitrary: anyJson, weight: 1 },
  );
}
