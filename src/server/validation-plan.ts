import {
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import {
  message_rules as messageRulesOption,
  rules as rulesOption,
} from "../../gen/latchkey/v2/options_pb.js";
import type { StringBounds } from "../domain/field-rules.js";
import { cidrProblem, ipProblem } from "../domain/networks.js";
import { errors, type ServiceError } from "../errors/service-error.js";

/**
 * The field rules of a message, read from its `(latchkey.v2.rules)` and
 * `(latchkey.v2.message_rules)` options: the input of the validator generator (validation.ts),
 * read once per message type.
 */

/** The bounds of one field. */
export interface RulePlan {
  field: DescField;
  required: boolean;
  strings: StringBounds;
  numbers: { min?: number; max?: number };
  minItems?: number;
  maxItems?: number;
  /** The bounds of a google.protobuf.Struct field. */
  struct: { maxProps?: number; maxJsonBytes?: number };
  /** The nested message to walk, when the field holds messages. */
  nested?: DescMessage;
  isStruct: boolean;
  /** For lists of messages: the item field whose values must differ. */
  uniqueBy?: DescField;
}

/** The rules of a message. */
export interface MessageRulePlan {
  fields: RulePlan[];
  /** Groups of fields of which exactly one must be present. */
  exactlyOneOf: DescField[][];
}

/** The checks of the `format` rule, by its name in the proto. */
const FORMATS: Readonly<Record<string, (value: string) => string | undefined>> = {
  ip: ipProblem,
  cidr: cidrProblem,
};

/**
 * A rule of the contract that names no field: found when a message is first checked (at its
 * first request), it is the contract's fault, not the request's, so a 500 whose reason is logged.
 */
function contractFault(why: string): ServiceError {
  return errors.unexpected(new TypeError(why));
}

function formatOf(field: DescField, name: string | undefined) {
  if (name === undefined) return undefined;
  const check = FORMATS[name];
  if (!check) throw contractFault(`${field.parent.typeName}.${field.name}: unknown format ${name}`);
  return check;
}

function rulePlanOf(field: DescField): RulePlan {
  const r = hasOption(field, rulesOption) ? getOption(field, rulesOption) : undefined;
  const nested =
    field.fieldKind === "message"
      ? field.message
      : field.fieldKind === "list" && field.listKind === "message"
        ? field.message
        : undefined;
  const p: RulePlan = {
    field,
    required: r?.required ?? false,
    strings: {
      minLen: r?.minLen,
      maxLen: r?.maxLen,
      pattern: r?.pattern !== undefined ? new RegExp(r.pattern, "u") : undefined,
      format: formatOf(field, r?.format),
    },
    numbers: {},
    struct: {},
    isStruct: nested?.typeName === "google.protobuf.Struct",
  };
  if (r?.min !== undefined) p.numbers.min = Number(r.min);
  if (r?.max !== undefined) p.numbers.max = Number(r.max);
  if (r?.minItems !== undefined) p.minItems = r.minItems;
  if (r?.maxItems !== undefined) p.maxItems = r.maxItems;
  if (r?.maxProps !== undefined) p.struct.maxProps = r.maxProps;
  if (r?.maxJsonBytes !== undefined) p.struct.maxJsonBytes = r.maxJsonBytes;
  if (nested && nested.typeName !== "google.protobuf.Struct") p.nested = nested;
  if (r?.uniqueBy !== undefined && nested) {
    const key = nested.fields.find((f) => f.name === r.uniqueBy);
    if (!key)
      throw contractFault(`${field.parent.typeName}.${field.name}: unique_by names no field`);
    p.uniqueBy = key;
  }
  return p;
}

/** The rules of `desc`; throws the catalog's internal error for a rule that names no field. */
export function rulePlanFor(desc: DescMessage): MessageRulePlan {
  const fields = desc.fields.map(rulePlanOf);
  const rules = hasOption(desc, messageRulesOption)
    ? getOption(desc, messageRulesOption)
    : undefined;
  const group = (rules?.exactlyOneOf ?? []).map((name) => {
    const f = desc.fields.find((x) => x.name === name);
    if (!f) throw contractFault(`${desc.typeName}: exactly_one_of names no field ${name}`);
    return f;
  });
  return { fields, exactlyOneOf: group.length > 0 ? [group] : [] };
}

/** True for the scalar types whose values must be integers. */
export function isIntegerScalar(t: ScalarType): boolean {
  return t !== ScalarType.DOUBLE && t !== ScalarType.FLOAT;
}
