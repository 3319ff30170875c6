import type { DescMessage } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { compileFunction, functionName, js, PerMessage } from "./generated-code.js";
import { type JsonFieldPlan, jsonEnumPlanOf, jsonPlanOf } from "./json-plan.js";
import {
  boolText,
  int64Text,
  scalarText,
  stringText,
  textFunctionFor,
  zeroText,
} from "./json-scalar-text.js";

/**
 * The /v2 JSON writer of each message type, generated from its descriptor and options on its
 * first answer (see generated-code.ts for why, and for what may go into the source): one
 * function per type that writes the members in declaration order, straight to text. A member
 * is one constant (`,"name":` with its comma, or the whole member for a constant value) and
 * its value: few pieces of string, which is most of what writing costs once V8 joins them.
 */

/** Writes a message, or its init shape, as /v2 JSON text. */
export type Encoder = (message: Record<string, unknown>) => string;

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;

/**
 * Source appending a member: `constant` (text: the key, and the value too when it is known)
 * then `value` (an expression), with a comma unless it is the first member written. `first`
 * says whether one may have been written before (`c`, at run time) or not.
 */
function append(constant: string, value: string | null, first: boolean): string {
  const head = first ? js(constant) : `(c ? ${js(`,${constant}`)} : ${js(constant)})`;
  return `t += ${value === null ? head : `${head} + ${value}`}; c = true;`;
}

/** Source appending the member for an unset field, or nothing when it is left out. */
function unsetSource(p: JsonFieldPlan, kind: "list" | "message" | "other", first: boolean) {
  if (p.emitEmpty && kind === "list") return ` else { ${append(`${p.key}[]`, null, first)} }`;
  if (p.emitEmpty && kind === "message") return ` else { ${append(`${p.key}{}`, null, first)} }`;
  if (p.emitNull && kind !== "list") return ` else { ${append(`${p.key}null`, null, first)} }`;
  return "";
}

/** Source of a switch on `subject` writing an enum value's documented string, else `fallback`. */
function enumSwitch(
  p: JsonFieldPlan,
  subject: string,
  write: (quoted: string) => string,
  fallback = "",
): string {
  const f = p.field;
  const e = f.fieldKind === "enum" || (f.fieldKind === "list" && f.listKind === "enum");
  if (!e || !f.enum) throw new TypeError(`${f.parent.typeName}.${f.name} is not an enum`);
  const cases = [...jsonEnumPlanOf(f.enum).quoted].map(
    ([n, quoted]) => `case ${n}: ${write(quoted)} break;`,
  );
  return `switch (${subject}) { ${cases.join(" ")} default: ${fallback} }`;
}

/** Source appending one list item, `e`, to `t`. */
function itemSource(p: JsonFieldPlan, nested: string | undefined): string {
  const f = p.field;
  if (f.fieldKind !== "list") throw new TypeError(`${f.name} is not a list`);
  if (f.listKind === "enum") {
    return enumSwitch(p, "e", (q) => `t += ${js(q)};`, 't += "null";');
  }
  if (f.listKind === "message" && !p.isStruct) return `t += ${nested}.fn(e);`;
  const text = f.listKind === "message" ? "stringify(e)" : `${textFunctionFor(f.scalar)}(e)`;
  return `x = ${text}; t += x === undefined ? "null" : x;`;
}

/** Source writing one member from `v`, the field's value (read just before). */
function memberSource(p: JsonFieldPlan, nested: string | undefined, first: boolean): string {
  const f = p.field;
  switch (f.fieldKind) {
    case "list": {
      const loop = `for (let i = 0; i < v.length; i++) { const e = v[i]; if (i !== 0) t += ","; ${itemSource(p, nested)} }`;
      return `if (v !== undefined && v !== null && v.length !== 0) { ${append(`${p.key}[`, null, first)} ${loop} t += "]"; }${unsetSource(p, "list", first)}`;
    }
    case "map":
      return "";
    case "enum": {
      const write = (quoted: string) => append(p.key + quoted, null, first);
      return `if (v !== undefined && v !== 0) { ${enumSwitch(p, "v", write)} }${unsetSource(p, "other", first)}`;
    }
    case "message": {
      const unset = unsetSource(p, "message", first);
      if (!p.isStruct)
        return `if (v !== undefined) { ${append(p.key, `${nested}.fn(v)`, first)} }${unset}`;
      return `if (v !== undefined) { x = stringify(v); if (x !== undefined) { ${append(p.key, "x", first)} } }${unset}`;
    }
    default: {
      const written = `x = ${textFunctionFor(f.scalar)}(v); if (x !== undefined) { ${append(p.key, "x", first)} }`;
      // A handler may answer with a message's init shape (the /v2 door does not make the
      // message): an implicit-presence scalar it left out has its zero value.
      if (f.presence === IMPLICIT) {
        const zero = append(p.key + zeroText(f.scalar), null, first);
        return `if (v === undefined) { ${zero} } else { ${written} }`;
      }
      return `if (v !== undefined) { ${written} }${unsetSource(p, "other", first)}`;
    }
  }
}

function generateEncoder(desc: DescMessage): Encoder {
  const scope: Record<string, unknown> = {
    scalarText,
    stringText,
    int64Text,
    boolText,
    stringify: JSON.stringify,
  };
  const fields = jsonPlanOf(desc).fields.filter((p) => p.field.fieldKind !== "map");
  const members = fields.map((p, i) => {
    let nested: string | undefined;
    const message = p.field.message;
    if (message && !p.isStruct) {
      nested = `n${i}`;
      scope[nested] = encoders.cell(message);
    }
    return `v = m[${js(p.field.localName)}];\n  ${memberSource(p, nested, i === 0)}`;
  });
  return compileFunction<Encoder>(
    scope,
    `return function ${functionName("encode", desc)}(m) {
  let t = "{", c = false, v, x;
  ${members.join("\n  ")}
  return t + "}";
};`,
  );
}

const encoders = new PerMessage<Encoder>(generateEncoder);

/** The encoder of a message type, generated when first asked for. */
export function encoderFor(desc: DescMessage): Encoder {
  return encoders.ready(desc);
}
