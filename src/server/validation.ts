import type { DescMessage } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { checkItems, checkNumber, checkString, violationsFull } from "../domain/field-rules.js";
import type { Violation } from "../errors/service-error.js";
import { compileFunction, functionName, js, PerMessage } from "./generated-code.js";
import { jsonPresenceOf, satisfiesRequired } from "./presence.js";
import { checkExactlyOne, checkStruct, checkUnique } from "./validation-checks.js";
import { isIntegerScalar, type RulePlan, rulePlanFor } from "./validation-plan.js";

/**
 * The validator of each message type, generated from its field rules on its first request
 * (see generated-code.ts for why, and for what may go into the source).
 */

type Validator = (message: Record<string, unknown>, pointer: string, out: Violation[]) => void;

const EXPLICIT = FeatureSet_FieldPresence.EXPLICIT;

/** A required list names `[]` as the way to give none: an omitted one is not taken as empty. */
const REQUIRED_LIST = "is required: give [] for none";

/** The names the generated source uses for a field's constants in its scope. */
interface Names {
  field: string;
  unique: string;
  strings: string;
  numbers: string;
  struct: string;
  nested: string;
}

/** Source of the test that the field holds a value, by protobuf presence, on `value`. */
function presentByValue(p: RulePlan): string {
  const f = p.field;
  switch (f.fieldKind) {
    case "list":
      return "value.length > 0";
    case "map":
      return "Object.keys(value).length > 0";
    case "message":
      return "value !== undefined";
    default:
      if (f.presence === EXPLICIT) return "value !== undefined";
      // Implicit presence: the default value means "not sent".
      return 'value !== undefined && value !== "" && value !== 0 && value !== false && value !== 0n';
  }
}

/** Source checking one scalar value `v` against the field's bounds, reporting at `at`. */
function scalarSource(v: string, integer: boolean, at: string, n: Names): string {
  return `x = typeof ${v} === "string" ? checkString(${v}, ${n.strings})
      : typeof ${v} === "number" ? checkNumber(${v}, ${n.numbers}, ${integer})
      : typeof ${v} === "bigint" ? checkNumber(Number(${v}), ${n.numbers}, true) : undefined;
    if (x) out.push({ location: ${at}, message: x });`;
}

/** Source for a field absent from the message: a lower bound on items, or required. */
function absentSource(p: RulePlan, at: string, n: Names): string {
  const f = p.field;
  const list = f.fieldKind === "list";
  // An empty list is "absent" over binary protobuf; a lower bound on items still applies.
  if (list && p.minItems !== undefined && p.minItems > 0) {
    return `out.push({ location: ${at}, message: ${js(checkItems(0, p.minItems))} });`;
  }
  if (!p.required) return "";
  const problem = `out.push({ location: ${at}, message: ${js(list ? REQUIRED_LIST : "is required")} });`;
  const bounds = list ? "" : `else { ${scalarSource("value", integerOf(p), at, n)} }`;
  return `if (!satisfiesRequired(message, ${n.field})) ${problem} ${bounds}`;
}

/** Whether a value of the field (an item, for a list) is checked as an integer. */
function integerOf(p: RulePlan): boolean {
  const f = p.field;
  const scalar =
    f.fieldKind === "list" ? (f.listKind === "scalar" ? f.scalar : undefined) : f.scalar;
  return scalar !== undefined && isIntegerScalar(scalar);
}

/** Source checking the list `value`: its size, each item, and that items are unique. */
function listSource(p: RulePlan, at: string, n: Names): string {
  const itemAt = `${at} + "/" + i`;
  const each = p.nested
    ? `${n.nested}.fn(value[i], ${itemAt}, out);`
    : `const item = value[i]; ${scalarSource("item", integerOf(p), itemAt, n)}`;
  // An item's pointer is built only for an item that fails: a thousand valid strings cost
  // no string building.
  const items = `for (let i = 0; i < value.length && !violationsFull(out); i++) { ${each} }`;
  const unique = p.uniqueBy ? `checkUnique(${n.unique}, value, ${at}, out);` : "";
  return `x = checkItems(value.length, ${js(p.minItems)}, ${js(p.maxItems)});
    if (x) out.push({ location: ${at}, message: x });
    else { ${items} ${unique} }`;
}

/** Source checking a value present in the message. */
function presentSource(p: RulePlan, at: string, n: Names): string {
  const f = p.field;
  switch (f.fieldKind) {
    case "scalar":
      return scalarSource("value", integerOf(p), at, n);
    case "enum": {
      const known = [...new Set(f.enum.values.map((v) => v.number))];
      const required = p.required ? `if (value === 0) ${violation(at, "is required")}` : "";
      return `switch (value) { ${known.map((k) => `case ${k}:`).join(" ")} ${required} break;
      default: ${violation(at, "is not a known value")} }`;
    }
    case "message":
      if (p.isStruct) return `checkStruct(${n.struct}, value, ${at}, out);`;
      return p.nested ? `${n.nested}.fn(value, ${at}, out);` : "";
    case "list":
      return listSource(p, at, n);
    case "map":
      return "";
  }
}

function violation(at: string, message: string): string {
  return `out.push({ location: ${at}, message: ${js(message)} });`;
}

/** Source checking one field, its constants put into `scope`. */
function fieldSource(p: RulePlan, i: number, scope: Record<string, unknown>): string {
  const f = p.field;
  const n: Names = {
    field: `f${i}`,
    unique: `u${i}`,
    strings: `s${i}`,
    numbers: `b${i}`,
    struct: `t${i}`,
    nested: `n${i}`,
  };
  scope[n.field] = f;
  scope[n.unique] = p.uniqueBy;
  scope[n.strings] = p.strings;
  scope[n.numbers] = p.numbers;
  scope[n.struct] = p.struct;
  if (p.nested) scope[n.nested] = validators.cell(p.nested);
  const local = js(f.localName);
  const at = `pointer + ${js(`/${f.jsonName}`)}`;
  return `if (violationsFull(out)) return;
  value = message[${local}];
  if (!(sent ? sent.has(${local}) : ${presentByValue(p)})) {
    ${absentSource(p, at, n)}
  } else if (value !== undefined) {
    ${presentSource(p, at, n)}
  }`;
}

function generateValidator(desc: DescMessage): Validator {
  const plan = rulePlanFor(desc);
  const scope: Record<string, unknown> = {
    checkExactlyOne,
    checkStruct,
    checkUnique,
    checkItems,
    checkNumber,
    checkString,
    violationsFull,
    jsonPresenceOf,
    satisfiesRequired,
  };
  const groups = plan.exactlyOneOf.map((group, i) => {
    scope[`g${i}`] = group;
    return `checkExactlyOne(g${i}, message, pointer, out);`;
  });
  const fields = plan.fields.map((p, i) => fieldSource(p, i, scope));
  return compileFunction<Validator>(
    scope,
    `return function ${functionName("validate", desc)}(message, pointer, out) {
  ${groups.join("\n  ")}
  const sent = jsonPresenceOf(message);
  let value, x;
  ${fields.join("\n  ")}
};`,
  );
}

const validators = new PerMessage<Validator>(generateValidator);

/**
 * Validates a decoded request against the bounds declared in the proto, appending one
 * violation per failing field with a JSON Pointer built from JSON field names (the same
 * pointer on every door). Nested messages and list items are walked, until `out` holds
 * more than MAX_VIOLATIONS: then it stops, so a long list of bad items costs no more than
 * a short one.
 */
export function validateMessage(
  desc: DescMessage,
  message: Record<string, unknown>,
  pointer: string,
  out: Violation[],
): void {
  validators.ready(desc)(message, pointer, out);
}
