import {
  type DescEnum,
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
} from "@bufbuild/protobuf";
import { json as jsonOption, json_value as jsonValue } from "../../gen/latchkey/v2/options_pb.js";
import { escapePointer } from "../domain/field-rules.js";

/**
 * What the /v2 JSON form of a message is, read from its descriptor and `(latchkey.v2.json)`
 * options: the input of the encoder and decoder generators (json-encoder.ts,
 * json-decoder.ts), read once per message type.
 */

/** One field as the /v2 JSON form reads and writes it. */
export interface JsonFieldPlan {
  field: DescField;
  /** `"jsonName":`, the start of the member in /v2 JSON text. */
  key: string;
  pointerToken: string;
  nullable: boolean;
  emitEmpty: boolean;
  emitNull: boolean;
  isStruct: boolean;
}

/** The fields of a message in declaration order, without its update mask. */
export interface JsonMessagePlan {
  fields: JsonFieldPlan[];
  byProtoName: Map<string, JsonFieldPlan>;
  /** The `update_mask` field, when the message is an update request. */
  updateMask?: DescField;
}

/** True for the update mask of an update request: derived from the keys, never sent. */
function isUpdateMask(field: DescField): boolean {
  return field.name === "update_mask" && field.message?.typeName === "google.protobuf.FieldMask";
}

/** The plan of a message (not cached: the generators read it once per message type). */
export function jsonPlanOf(desc: DescMessage): JsonMessagePlan {
  const fields: JsonFieldPlan[] = [];
  let updateMask: DescField | undefined;
  for (const field of desc.fields) {
    if (isUpdateMask(field)) {
      updateMask = field;
      continue;
    }
    const o = hasOption(field, jsonOption) ? getOption(field, jsonOption) : undefined;
    fields.push({
      field,
      key: `${JSON.stringify(field.jsonName)}:`,
      pointerToken: escapePointer(field.jsonName),
      nullable: o?.nullable ?? false,
      emitEmpty: o?.emitEmpty ?? false,
      emitNull: o?.emitNull ?? false,
      isStruct: field.message?.typeName === "google.protobuf.Struct",
    });
  }
  return {
    fields,
    byProtoName: new Map(fields.map((p) => [p.field.name, p])),
    ...(updateMask ? { updateMask } : {}),
  };
}

/** An enum's documented strings (value 0, "unspecified", has none). */
export interface JsonEnumPlan {
  toNumber: Map<string, number>;
  /** A value's documented text as a JSON string, ready to write. */
  quoted: Map<number, string>;
  /** The accepted strings, for the violation naming them. */
  allowed: string;
}

/** The documented strings of an enum: `(latchkey.v2.json_value)`, else the value's name. */
export function jsonEnumPlanOf(desc: DescEnum): JsonEnumPlan {
  const toNumber = new Map<string, number>();
  const quoted = new Map<number, string>();
  for (const v of desc.values) {
    if (v.number === 0) continue;
    const s = hasOption(v, jsonValue) ? getOption(v, jsonValue) : v.name;
    toNumber.set(s, v.number);
    quoted.set(v.number, JSON.stringify(s));
  }
  return { toNumber, quoted, allowed: [...toNumber.keys()].join(", ") };
}

/** True for a JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
