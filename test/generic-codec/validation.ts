// A copy of the generic validator as it was before src/server/validation.ts became a
// per-message specialiser: the oracle of the equivalence tests and the "before" side of the
// `codec` benchmark (see json-codec.ts beside it for why it takes its dependencies).
import {
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import type { StringBounds } from "../../src/domain/field-rules.ts";
import type { Violation } from "../../src/errors/service-error.ts";
import type { GenericCodecDeps } from "./json-codec.ts";

/** The generic validateMessage over `deps`. */
export function genericValidator(deps: GenericCodecDeps) {
  const { message_rules: messageRulesOption, rules: rulesOption } = deps.options;
  const {
    checkItems,
    checkNumber,
    checkString,
    findTooDeep,
    findUnsafeNumber,
    findUnstorableString,
    MAX_STRUCT_DEPTH,
    violationsFull,
  } = deps.fieldRules;
  const { isPresent, satisfiesRequired } = deps.presence;
  const { cidrProblem, ipProblem } = deps.networks;

  /** The checks of the `format` rule, by its name in the proto. */
  const FORMATS: Readonly<Record<string, (value: string) => string | undefined>> = {
    ip: ipProblem,
    cidr: cidrProblem,
  };

  function formatOf(field: DescField, name: string | undefined) {
    if (name === undefined) return undefined;
    const check = FORMATS[name];
    if (!check)
      throw contractFault(`${field.parent.typeName}.${field.name}: unknown format ${name}`);
    return check;
  }

  /** The bounds of one field, read once from its `(latchkey.v2.rules)` option. */
  interface FieldPlan {
    field: DescField;
    required: boolean;
    strings: StringBounds;
    min?: number;
    max?: number;
    minItems?: number;
    maxItems?: number;
    maxProps?: number;
    maxJsonBytes?: number;
    /** The nested message to walk, when the field holds messages. */
    nested?: DescMessage;
    isStruct: boolean;
    /** For lists of messages: the item field whose values must differ. */
    uniqueBy?: DescField;
  }

  interface MessagePlan {
    fields: FieldPlan[];
    /** Groups of fields of which exactly one must be present. */
    exactlyOneOf: DescField[][];
  }

  const plans = new Map<string, MessagePlan>();

  /** A required list names `[]` as the way to give none: an omitted one is not taken as empty. */
  const REQUIRED_LIST = "is required: give [] for none";

  /**
   * A rule of the contract that names no field: found when a message is first checked (at its
   * first request), it is the contract's fault, not the request's, so a 500 whose reason is logged.
   */
  function contractFault(why: string): Error {
    return deps.unexpected(new TypeError(why));
  }

  function planFor(desc: DescMessage): MessagePlan {
    let plan = plans.get(desc.typeName);
    if (plan) return plan;
    const fields = desc.fields.map((field) => {
      const r = hasOption(field, rulesOption) ? getOption(field, rulesOption) : undefined;
      const nested =
        field.fieldKind === "message"
          ? field.message
          : field.fieldKind === "list" && field.listKind === "message"
            ? field.message
            : undefined;
      const p: FieldPlan = {
        field,
        required: r?.required ?? false,
        strings: {
          minLen: r?.minLen,
          maxLen: r?.maxLen,
          pattern: r?.pattern !== undefined ? new RegExp(r.pattern, "u") : undefined,
          format: formatOf(field, r?.format),
        },
        isStruct: nested?.typeName === "google.protobuf.Struct",
      };
      if (r?.min !== undefined) p.min = Number(r.min);
      if (r?.max !== undefined) p.max = Number(r.max);
      if (r?.minItems !== undefined) p.minItems = r.minItems;
      if (r?.maxItems !== undefined) p.maxItems = r.maxItems;
      if (r?.maxProps !== undefined) p.maxProps = r.maxProps;
      if (r?.maxJsonBytes !== undefined) p.maxJsonBytes = r.maxJsonBytes;
      if (nested && nested.typeName !== "google.protobuf.Struct") p.nested = nested;
      if (r?.uniqueBy !== undefined && nested) {
        const key = nested.fields.find((f) => f.name === r.uniqueBy);
        if (!key)
          throw contractFault(`${field.parent.typeName}.${field.name}: unique_by names no field`);
        p.uniqueBy = key;
      }
      return p;
    });
    const rules = hasOption(desc, messageRulesOption)
      ? getOption(desc, messageRulesOption)
      : undefined;
    const group = (rules?.exactlyOneOf ?? []).map((name) => {
      const f = desc.fields.find((x) => x.name === name);
      if (!f) throw contractFault(`${desc.typeName}: exactly_one_of names no field ${name}`);
      return f;
    });
    plan = { fields, exactlyOneOf: group.length > 0 ? [group] : [] };
    plans.set(desc.typeName, plan);
    return plan;
  }

  function checkExactlyOne(
    group: DescField[],
    message: Record<string, unknown>,
    pointer: string,
    out: Violation[],
  ): void {
    const present = group.filter((f) => isPresent(message, f));
    const names = group.map((f) => f.jsonName);
    // Binary protobuf cannot tell an implicit number sent as 0 from one left out: with no other
    // member given, such a member counts as given, as a required one does (`cost` 0 over gRPC).
    if (present.length === 0 && group.some((f) => satisfiesRequired(message, f))) return;
    if (present.length === 0) {
      out.push({
        location: `${pointer}/${names[0]}`,
        message: `is required: give one of ${names.join(", ")}`,
      });
    } else if (present.length > 1) {
      const [first, second] = present as [DescField, DescField];
      out.push({
        location: `${pointer}/${second.jsonName}`,
        message: `cannot be given together with ${first.jsonName}`,
      });
    }
  }

  function checkUnique(p: FieldPlan, items: unknown[], at: string, out: Violation[]): void {
    const key = p.uniqueBy as DescField;
    const seen = new Map<unknown, number>();
    for (let i = 0; i < items.length && !violationsFull(out); i++) {
      const value = (items[i] as Record<string, unknown>)[key.localName];
      const first = seen.get(value);
      if (first === undefined) seen.set(value, i);
      else {
        out.push({
          location: `${at}/${i}/${key.jsonName}`,
          message: `duplicates ${at}/${first}/${key.jsonName}: ${key.jsonName} must be unique`,
        });
      }
    }
  }

  function isIntegerScalar(t: ScalarType): boolean {
    return t !== ScalarType.DOUBLE && t !== ScalarType.FLOAT;
  }

  /** The violation message of one scalar value, or undefined when it is fine. */
  function scalarProblem(
    p: FieldPlan,
    scalar: ScalarType | undefined,
    value: unknown,
  ): string | undefined {
    if (typeof value === "string") return checkString(value, p.strings);
    if (typeof value === "number") {
      return checkNumber(value, p, scalar !== undefined && isIntegerScalar(scalar));
    }
    if (typeof value === "bigint") return checkNumber(Number(value), p, true);
    return undefined;
  }

  function checkScalar(
    p: FieldPlan,
    scalar: ScalarType | undefined,
    value: unknown,
    at: string,
    out: Violation[],
  ): void {
    const message = scalarProblem(p, scalar, value);
    if (message) out.push({ location: at, message });
  }

  /**
   * Checks every item of a list. An item's pointer is built only for an item that fails:
   * a list of a thousand valid strings costs no string building.
   */
  function checkItemsOf(p: FieldPlan, items: unknown[], at: string, out: Violation[]): void {
    const nested = p.nested;
    if (nested) {
      for (let i = 0; i < items.length && !violationsFull(out); i++) {
        validateMessage(nested, items[i] as Record<string, unknown>, `${at}/${i}`, out);
      }
      return;
    }
    const f = p.field;
    const scalar = f.fieldKind === "list" && f.listKind === "scalar" ? f.scalar : undefined;
    for (let i = 0; i < items.length && !violationsFull(out); i++) {
      const message = scalarProblem(p, scalar, items[i]);
      if (message) out.push({ location: `${at}/${i}`, message });
    }
  }

  function checkStruct(p: FieldPlan, value: object, at: string, out: Violation[]): void {
    if (p.maxProps !== undefined && Object.keys(value).length > p.maxProps) {
      out.push({ location: at, message: `must have at most ${p.maxProps} top-level properties` });
      return;
    }
    // First, so that the walks below recurse a bounded number of times.
    const deep = findTooDeep(value, at, MAX_STRUCT_DEPTH);
    if (deep !== undefined) {
      out.push({ location: deep, message: `nests deeper than ${MAX_STRUCT_DEPTH} levels` });
      return;
    }
    const unsafe = findUnsafeNumber(value, at);
    if (unsafe !== undefined) {
      out.push({ location: unsafe, message: "numbers must be finite and integers at most 2^53-1" });
      return;
    }
    const unstorable = findUnstorableString(value, at);
    if (unstorable !== undefined) {
      out.push(unstorable);
      return;
    }
    if (p.maxJsonBytes !== undefined) {
      const bytes = Buffer.byteLength(JSON.stringify(value));
      if (bytes > p.maxJsonBytes) {
        out.push({
          location: at,
          message: `must be at most ${p.maxJsonBytes} bytes as JSON (got ${bytes})`,
        });
      }
    }
  }

  /**
   * Validates a decoded request against the bounds declared in the proto, appending one
   * violation per failing field with a JSON Pointer built from JSON field names (the same
   * pointer on every door). Nested messages and list items are walked, until `out` holds
   * more than MAX_VIOLATIONS: then it stops, so a long list of bad items costs no more than
   * a short one.
   */
  function validateMessage(
    desc: DescMessage,
    message: Record<string, unknown>,
    pointer: string,
    out: Violation[],
  ): void {
    const plan = planFor(desc);
    for (const group of plan.exactlyOneOf) checkExactlyOne(group, message, pointer, out);
    for (const p of plan.fields) {
      if (violationsFull(out)) return;
      const f = p.field;
      const at = `${pointer}/${f.jsonName}`;
      if (!isPresent(message, f)) {
        // An empty list is "absent" over binary protobuf; a lower bound on items still applies.
        if (f.fieldKind === "list" && p.minItems !== undefined && p.minItems > 0) {
          out.push({ location: at, message: checkItems(0, p.minItems) as string });
          continue;
        }
        if (p.required && !satisfiesRequired(message, f))
          out.push({
            location: at,
            message: f.fieldKind === "list" ? REQUIRED_LIST : "is required",
          });
        else if (p.required && f.fieldKind !== "list")
          checkScalar(p, f.scalar, message[f.localName], at, out);
        continue;
      }
      const value = message[f.localName];
      if (value === undefined) continue;
      switch (f.fieldKind) {
        case "scalar":
          checkScalar(p, f.scalar, value, at, out);
          break;
        case "enum":
          if (f.enum.values.every((v) => v.number !== value)) {
            out.push({ location: at, message: "is not a known value" });
          } else if (p.required && value === 0) out.push({ location: at, message: "is required" });
          break;
        case "message":
          if (p.isStruct) checkStruct(p, value as object, at, out);
          else if (p.nested) validateMessage(p.nested, value as Record<string, unknown>, at, out);
          break;
        case "list": {
          const items = value as unknown[];
          const sizeMessage = checkItems(items.length, p.minItems, p.maxItems);
          if (sizeMessage) {
            out.push({ location: at, message: sizeMessage });
            break;
          }
          checkItemsOf(p, items, at, out);
          if (p.uniqueBy) checkUnique(p, items, at, out);
          break;
        }
        case "map":
          break;
      }
    }
  }
  return { validateMessage };
}
