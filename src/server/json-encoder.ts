import { type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { compileFunction, functionName, js, PerMessage } from "./generated-code.js";
import { type JsonFieldPlan, jsonEnumPlanOf, jsonPlanOf } from "./json-plan.js";

/**
 * The /v2 JSON writer of each message type, generated from its descriptor and options on its
 * first answer (see generated-code.ts for why, and for what may go into the source): one
 * function per type that writes the members in declaration order, straight to text.
 */

/** Writes a message, or its init shape, as /v2 JSON text. */
export type Encoder = (message: Record<string, unknown>) => string;

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;

/** The zero value an implicit-presence scalar has when a handler's answer leaves it out. */
function scalarZero(type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING:
      return "";
    case ScalarType.BOOL:
      return false;
    case ScalarType.BYTES:
      return new Uint8Array(0);
    default:
      return 0;
  }
}

/** One value as JSON text; undefined where JSON.stringify would leave the member out. */
function scalarText(v: unknown): string | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "bigint") return scalarText(Number(v));
  if (typeof v === "boolean") return v ? "true" : "false";
  return JSON.stringify(v);
}

/** Source that appends `text` (an expression) as the next member. */
function append(text: string): string {
  return `t += s + ${text}; s = ",";`;
}

/** Source appending the member for an unset field, or nothing when it is left out. */
function unsetSource(p: JsonFieldPlan, kind: "list" | "message" | "other"): string {
  if (p.emitEmpty && kind === "list") return ` else { ${append(js(`${p.key}[]`))} }`;
  if (p.emitEmpty && kind === "message") return ` else { ${append(js(`${p.key}{}`))} }`;
  if (p.emitNull && kind !== "list") return ` else { ${append(js(`${p.key}null`))} }`;
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

/** Source appending one list item, `v[i]`, to `t`. */
function itemSource(p: JsonFieldPlan, nested: string | undefined): string {
  const f = p.field;
  if (f.fieldKind !== "list") throw new TypeError(`${f.name} is not a list`);
  if (f.listKind === "enum") {
    return enumSwitch(p, "e", (q) => `t += ${js(q)};`, 't += "null";');
  }
  if (f.listKind === "message" && !p.isStruct) return `t += ${nested}.fn(e);`;
  const text = f.listKind === "message" ? "stringify(e)" : "scalarText(e)";
  return `x = ${text}; t += x === undefined ? "null" : x;`;
}

/** Source writing one member from `v`, the field's value (read just before). */
function memberSource(p: JsonFieldPlan, nested: string | undefined): string {
  const f = p.field;
  const key = js(p.key);
  switch (f.fieldKind) {
    case "list": {
      const loop = `for (let i = 0; i < v.length; i++) { const e = v[i]; if (i !== 0) t += ","; ${itemSource(p, nested)} }`;
      return `if (v !== undefined && v !== null && v.length !== 0) { t += s + ${js(`${p.key}[`)}; ${loop} t += "]"; s = ","; }${unsetSource(p, "list")}`;
    }
    case "map":
      return "";
    case "enum": {
      const write = (quoted: string) => append(js(p.key + quoted));
      return `if (v !== undefined && v !== 0) { ${enumSwitch(p, "v", write)} }${unsetSource(p, "other")}`;
    }
    case "message":
      if (!p.isStruct) {
        return `if (v !== undefined) { ${append(`${key} + ${nested}.fn(v)`)} }${unsetSource(p, "message")}`;
      }
      return `if (v !== undefined) { x = stringify(v); if (x !== undefined) { ${append(`${key} + x`)} } }${unsetSource(p, "message")}`;
    default: {
      const written = `x = scalarText(v); if (x !== undefined) { ${append(`${key} + x`)} }`;
      // A handler may answer with a message's init shape (the /v2 door does not make the
      // message): an implicit-presence scalar it left out has its zero value.
      if (f.presence === IMPLICIT) {
        const zero = p.key + (scalarText(scalarZero(f.scalar)) as string);
        return `if (v === undefined) { ${append(js(zero))} } else { ${written} }`;
      }
      return `if (v !== undefined) { ${written} }${unsetSource(p, "other")}`;
    }
  }
}

function generateEncoder(desc: DescMessage): Encoder {
  const scope: Record<string, unknown> = { scalarText, stringify: JSON.stringify };
  const members = jsonPlanOf(desc).fields.map((p, i) => {
    if (p.field.fieldKind === "map") return "";
    let nested: string | undefined;
    const message = p.field.message;
    if (message && !p.isStruct) {
      nested = `n${i}`;
      scope[nested] = encoders.cell(message);
    }
    return `v = m[${js(p.field.localName)}];\n${memberSource(p, nested)}`;
  });
  return compileFunction<Encoder>(
    scope,
    `return function ${functionName("encode", desc)}(m) {
  let t = "{", s = "", v, x;
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
