import { create, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import { escapePointer, violationsFull } from "../domain/field-rules.js";
import type { Violation } from "../errors/service-error.js";
import { compileFunction, functionName, js, PerMessage } from "./generated-code.js";
import {
  isPlainObject,
  type JsonFieldPlan,
  type JsonMessagePlan,
  jsonEnumPlanOf,
  jsonPlanOf,
} from "./json-plan.js";
import { jsonPresenceOf, recordJsonPresence } from "./presence.js";
import { zeroMessageSource } from "./zero-message.js";

/**
 * The /v2 JSON reader of each message type, generated from its descriptor and options on its
 * first request (see generated-code.ts for why, and for what may go into the source): a
 * `switch` over the body's keys with each field's reading written out for its kind.
 */

/** Reads a JSON value into a message, appending violations to `out` (see decodeObject). */
export type Decoder = (json: unknown, pointer: string, out: Violation[]) => Record<string, unknown>;

/** Why a JSON value is not an integer, or undefined when it is one that JSON can carry exactly. */
function integerProblem(v: unknown): string | undefined {
  if (typeof v !== "number") {
    return typeof v === "string" ? "must be a JSON number, not a string" : "must be an integer";
  }
  if (!Number.isInteger(v)) return "must be an integer";
  if (!Number.isSafeInteger(v)) return "must be an integer between -(2^53-1) and 2^53-1";
  return undefined;
}

/** Why a JSON value is not an integer in [lo, hi] (the 32-bit types). */
function int32Problem(v: unknown, lo: number, hi: number): string | undefined {
  const problem = integerProblem(v);
  if (problem !== undefined) return problem;
  return (v as number) < lo || (v as number) > hi ? `must be between ${lo} and ${hi}` : undefined;
}

/** Why a JSON value is not a 64-bit integer (`unsigned`: not a negative one). */
function int64Problem(v: unknown, unsigned: boolean): string | undefined {
  return integerProblem(v) ?? (unsigned && (v as number) < 0 ? "must not be negative" : undefined);
}

/** Reports a key that names no field: a proto name, the update mask, or nothing known. */
function unknownKeyReporter(plan: JsonMessagePlan) {
  return (key: string, pointer: string, out: Violation[]): void => {
    const location = `${pointer}/${escapePointer(key)}`;
    const alias = plan.byProtoName.get(key);
    if (alias) out.push({ location, message: `unknown field: use '${alias.field.jsonName}'` });
    else if (plan.updateMask && key === "updateMask") {
      out.push({
        location,
        message: "is not accepted: the fields present in the body say what to update",
      });
    } else out.push({ location, message: "unknown field" });
  };
}

/** How read values are kept: `store(value)` on success, `failed` after a violation. */
interface Sink {
  store: (value: string) => string;
  failed: string;
}

/** Source pushing a violation at `at` (an expression) with a fixed message. */
function violation(at: string, message: string): string {
  return `out.push({ location: ${at}, message: ${js(message)} });`;
}

/** Source reading one scalar, `v`, of the field's type. */
function scalarSource(type: ScalarType, v: string, at: string, sink: Sink): string {
  const typed = (jsType: string, message: string) =>
    `if (typeof ${v} === ${js(jsType)}) ${sink.store(v)} else { ${violation(at, message)} ${sink.failed} }`;
  const checked = (problem: string, value: string) =>
    `x = ${problem}; if (x === undefined) ${sink.store(value)} else { out.push({ location: ${at}, message: x }); ${sink.failed} }`;
  switch (type) {
    case ScalarType.STRING:
      return typed("string", "must be a string");
    case ScalarType.BOOL:
      return typed("boolean", "must be a boolean");
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return typed("number", "must be a number");
    case ScalarType.BYTES:
      return `${violation(at, "bytes are not accepted in JSON")} ${sink.failed}`;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return checked(`int32Problem(${v}, 0, 4294967295)`, v);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return checked(`int32Problem(${v}, -2147483648, 2147483647)`, v);
    default: {
      const unsigned = type === ScalarType.UINT64 || type === ScalarType.FIXED64;
      return checked(`int64Problem(${v}, ${unsigned})`, `BigInt(${v})`);
    }
  }
}

/** Source reading one value, `v`, of the field (or one item of a list field). */
function singleSource(p: JsonFieldPlan, v: string, at: string, sink: Sink, nested?: string) {
  const f = p.field;
  const kind = f.fieldKind === "list" ? f.listKind : f.fieldKind;
  if (kind === "scalar" && f.scalar !== undefined) return scalarSource(f.scalar, v, at, sink);
  if (kind === "enum" && f.enum) {
    const e = jsonEnumPlanOf(f.enum);
    const cases = [...e.toNumber].map(([s, n]) => `case ${js(s)}: ${sink.store(String(n))} break;`);
    const refused = violation(at, `must be one of: ${e.allowed}`);
    return `switch (${v}) { ${cases.join(" ")} default: ${refused} ${sink.failed} }`;
  }
  if (p.isStruct) {
    return `if (isPlainObject(${v})) ${sink.store(v)} else { ${violation(at, "must be a JSON object")} ${sink.failed} }`;
  }
  return sink.store(`${nested}.fn(${v}, ${at}, out)`);
}

/** Source of a field's `case`, reading `v` once its key is known. */
function fieldSource(p: JsonFieldPlan, nested: string | undefined): string {
  const f = p.field;
  const local = js(f.localName);
  const at = `pointer + ${js(`/${p.pointerToken}`)}`;
  const nullCase = p.nullable ? "" : violation(at, "must not be null");
  let read: string;
  if (f.fieldKind === "list") {
    const itemAt = `${at} + "/" + i`;
    const sink: Sink = { store: (x) => `items.push(${x});`, failed: "items.push(undefined);" };
    const strings = f.listKind === "scalar" && f.scalar === ScalarType.STRING;
    // A string in a list of strings is taken as is, with no pointer built for it (one is built
    // only for an item that fails): a request can carry some 100,000 of them.
    const fast = strings ? `if (typeof item === "string") { items.push(item); continue; }` : "";
    read = `if (!Array.isArray(v)) { ${violation(at, "must be an array")} } else {
        const items = [];
        for (let i = 0; i < v.length && !violationsFull(out); i++) {
          const item = v[i];
          ${fast}
          if (item === null) { ${violation(itemAt, "must not be null")} continue; }
          ${singleSource(p, "item", itemAt, sink, nested)}
        }
        message[${local}] = items;
      }`;
  } else if (f.fieldKind === "map") {
    read = violation(at, "maps are not accepted");
  } else {
    read = singleSource(
      p,
      "v",
      at,
      { store: (x) => `message[${local}] = ${x};`, failed: "" },
      nested,
    );
  }
  return `case ${js(f.jsonName)}:
      v = json[${js(f.jsonName)}];
      present.add(${local});
      if (v === null) { ${nullCase} } else { ${read} }
      break;`;
}

/** Source setting the update mask from the keys present (nested objects' keys included). */
function maskSource(plan: JsonMessagePlan): string {
  const mask = plan.updateMask;
  if (!mask) return "";
  const lines = plan.fields.map((p) => {
    const f = p.field;
    const local = js(f.localName);
    let nested = "";
    if (f.fieldKind === "message" && !p.isStruct) {
      // A nested object's keys go into the mask too (`credits.remaining`): protobuf cannot
      // tell a member sent as null from one left out, and an update may treat them apart.
      const subs = f.message.fields.map(
        (sub) => `if (sent.has(${js(sub.localName)})) paths.push(${js(`${f.name}.${sub.name}`)});`,
      );
      nested = `const sent = jsonPresenceOf(message[${local}]); if (sent !== undefined) { ${subs.join(" ")} }`;
    }
    return `if (present.has(${local})) { paths.push(${js(f.name)}); ${nested} }`;
  });
  return `const paths = [];
  ${lines.join("\n  ")}
  message[${js(mask.localName)}] = create(FieldMaskSchema, { paths });`;
}

function generateDecoder(desc: DescMessage): Decoder {
  const plan = jsonPlanOf(desc);
  const scope: Record<string, unknown> = {
    create,
    desc,
    FieldMaskSchema,
    isPlainObject,
    violationsFull,
    recordJsonPresence,
    jsonPresenceOf,
    int32Problem,
    int64Problem,
    unknownKey: unknownKeyReporter(plan),
  };
  const cases = plan.fields.map((p, i) => {
    let nested: string | undefined;
    if (p.field.message && !p.isStruct) {
      nested = `n${i}`;
      scope[nested] = decoders.cell(p.field.message);
    }
    return fieldSource(p, nested);
  });
  return compileFunction<Decoder>(
    scope,
    `return function ${functionName("decode", desc)}(json, pointer, out) {
  const message = ${zeroMessageSource(desc) ?? "create(desc)"};
  if (!isPlainObject(json)) {
    ${violation("pointer", "must be a JSON object")}
    return message;
  }
  const present = new Set();
  const keys = Object.keys(json);
  let v, x;
  for (let k = 0; k < keys.length; k++) {
    if (violationsFull(out)) break;
    const key = keys[k];
    // Each case reads its member by its constant name (a load V8 can keep monomorphic); a
    // key that names no field is only reported, its value never read.
    switch (key) {
      ${cases.join("\n      ")}
      default:
        unknownKey(key, pointer, out);
    }
  }
  recordJsonPresence(message, present);
  ${maskSource(plan)}
  return message;
};`,
  );
}

const decoders = new PerMessage<Decoder>(generateDecoder);

/** The decoder of a message type, generated when first asked for. */
export function decoderFor(desc: DescMessage): Decoder {
  return decoders.ready(desc);
}
