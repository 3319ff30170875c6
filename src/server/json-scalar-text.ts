import { ScalarType } from "@bufbuild/protobuf";

/**
 * Scalars as /v2 JSON text, for the generated encoders (json-encoder.ts). Each writes what
 * `scalarText` writes for any value; the typed ones only take a shorter way for the type the
 * field declares (a handler's answer may still hold anything).
 */

/** One value as JSON text; undefined where JSON.stringify would leave the member out. */
export function scalarText(v: unknown): string | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "bigint") return scalarText(Number(v));
  if (typeof v === "boolean") return v ? "true" : "false";
  return JSON.stringify(v);
}

/**
 * The characters JSON.stringify writes escaped: `"`, `\`, the controls below U+0020 and
 * surrogates (it escapes a lone one; a pair is written as is, but is left to it here).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the controls are what JSON escapes
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string as JSON.stringify writes it. Most strings of an answer (ids, names) need no
 * escape, and quoting one is several times cheaper than a call of JSON.stringify.
 */
export function stringText(v: unknown): string | undefined {
  if (typeof v === "string") return ESCAPED.test(v) ? JSON.stringify(v) : `"${v}"`;
  return scalarText(v);
}

/** A 64-bit integer (a bigint, as protobuf-es holds one) as a JSON number. */
export function int64Text(v: unknown): string | undefined {
  return typeof v === "bigint" ? scalarText(Number(v)) : scalarText(v);
}

/** A boolean as JSON text. */
export function boolText(v: unknown): string | undefined {
  return v === true ? "true" : v === false ? "false" : scalarText(v);
}

/** The name, among the functions above, of the one to write a scalar of `type` with. */
export function textFunctionFor(
  type: ScalarType,
): "scalarText" | "stringText" | "int64Text" | "boolText" {
  switch (type) {
    case ScalarType.STRING:
      return "stringText";
    case ScalarType.BOOL:
      return "boolText";
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return "int64Text";
    default:
      return "scalarText";
  }
}

/** The text of the zero value an implicit-presence scalar has when an answer leaves it out. */
export function zeroText(type: ScalarType): string {
  switch (type) {
    case ScalarType.STRING:
      return '""';
    case ScalarType.BOOL:
      return "false";
    case ScalarType.BYTES:
      // What the generic writer made of the zero Uint8Array: JSON.stringify writes `{}`.
      return JSON.stringify(new Uint8Array(0));
    default:
      return "0";
  }
}
