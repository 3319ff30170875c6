import { ScalarType } from "@bufbuild/protobuf";
import type { FieldRules } from "./options.ts";
import type { Direction, Schema } from "./schema-types.ts";

/** The /v2 door reads int64 as JSON numbers and refuses integers beyond 2^53-1. */
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const INT32: [number, number] = [-2147483648, 2147483647];
const UINT32: [number, number] = [0, 4294967295];

/**
 * The schema keywords of the `format` rule. JSON Schema's own `ipv4` and `ipv6` formats each
 * name one family, and it has none for a range, so the format is named as the door checks it
 * (OpenAPI allows any format name) and explained by an example.
 */
const STRING_FORMATS: Readonly<Record<string, Schema>> = {
  ip: { format: "ip", examples: ["203.0.113.7", "2001:db8::1"] },
  cidr: { format: "cidr", examples: ["10.0.0.0/8", "2001:db8::/32", "203.0.113.7"] },
};

function integerSchema(type: ScalarType, dir: Direction, r: FieldRules | undefined): Schema {
  const wide = [
    ScalarType.INT64,
    ScalarType.UINT64,
    ScalarType.SINT64,
    ScalarType.FIXED64,
    ScalarType.SFIXED64,
  ].includes(type);
  const unsigned = [ScalarType.UINT32, ScalarType.FIXED32, ScalarType.UINT64, ScalarType.FIXED64];
  const signed32 = [ScalarType.INT32, ScalarType.SINT32, ScalarType.SFIXED32].includes(type);
  const schema: Schema = { type: "integer", format: signed32 ? "int32" : "int64" };
  if (dir === "response") return schema;
  // The door refuses integers outside the type's range (and beyond 2^53-1) with 400.
  let [lo, hi] = wide ? [-MAX_SAFE, MAX_SAFE] : signed32 ? INT32 : UINT32;
  if (unsigned.includes(type)) lo = 0;
  if (r?.min !== undefined) lo = Math.max(lo, Number(r.min));
  if (r?.max !== undefined) hi = Math.min(hi, Number(r.max));
  return { ...schema, minimum: lo, maximum: hi };
}

/** The schema of one scalar value; requests carry the bounds the door checks. */
export function scalarSchema(type: ScalarType, dir: Direction, r: FieldRules | undefined): Schema {
  switch (type) {
    case ScalarType.STRING: {
      const schema: Schema = { type: "string" };
      if (r?.minLen !== undefined) schema.minLength = r.minLen;
      if (r?.maxLen !== undefined) schema.maxLength = r.maxLen;
      if (r?.pattern !== undefined) schema.pattern = r.pattern;
      if (r?.format !== undefined) Object.assign(schema, STRING_FORMATS[r.format]);
      return schema;
    }
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT: {
      const schema: Schema = {
        type: "number",
        format: type === ScalarType.DOUBLE ? "double" : "float",
      };
      if (r?.min !== undefined) schema.minimum = Number(r.min);
      if (r?.max !== undefined) schema.maximum = Number(r.max);
      return schema;
    }
    case ScalarType.BYTES:
      throw new Error("bytes fields have no /v2 JSON form");
    default:
      return integerSchema(type, dir, r);
  }
}
