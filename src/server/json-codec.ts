import { type DescMessage, getOption, hasOption } from "@bufbuild/protobuf";
import { message_rules as messageRules } from "../../gen/latchkey/v2/options_pb.js";
import type { Violation } from "../errors/service-error.js";
import { decoderFor } from "./json-decoder.js";
import { encoderFor } from "./json-encoder.js";

/**
 * The /v2 JSON form of our messages. It differs from protobuf JSON on purpose, to be the
 * form existing JSON clients send: int64 are JSON numbers, enums are the documented strings
 * ("VALID", not the proto name), only the
 * lowerCamel names are accepted, unknown keys are errors, null is accepted only where
 * the field is declared nullable, and the update mask is derived from the keys present.
 *
 * Each message type is read and written by a function generated from its descriptor
 * (json-decoder.ts, json-encoder.ts): this runs on every request and answer.
 */

/**
 * Decodes a JSON value into a message of `desc`, appending a violation for every key
 * or value the /v2 form does not accept. Always returns a message (possibly partial):
 * the caller decides what to do with the violations. It stops once `out` holds more than
 * MAX_VIOLATIONS: the answer lists no more, so looking further would be wasted work.
 */
export function decodeObject(
  desc: DescMessage,
  json: unknown,
  pointer: string,
  out: Violation[],
): Record<string, unknown> {
  return decoderFor(desc)(json, pointer, out);
}

/**
 * Writes a message, or the init shape of one, as /v2 JSON text: int64 as numbers, enums as the
 * documented strings, implicit scalars always written, unset optional fields and empty lists
 * omitted unless the field asks for `emit_empty` or `emit_null`. Written straight to text,
 * without an intermediate object for JSON.stringify to walk again: this runs on every answer.
 */
export function encodeJson(desc: DescMessage, message: Record<string, unknown>): string {
  return encoderFor(desc)(message);
}

/** The /v2 JSON form of a message as a value (encodeJson, parsed). */
export function encodeMessage(
  desc: DescMessage,
  message: Record<string, unknown>,
): Record<string, unknown> {
  return JSON.parse(encodeJson(desc, message)) as Record<string, unknown>;
}

const bareArrayFields = new Map<string, string | null>();

/**
 * A bare JSON array as the body of a request whose message declares `bare_array_field`
 * (ratelimit.multiLimit, as the public SDK sends it) means that field: `[...]` reads as
 * `{"limits": [...]}`. Any other body is returned as is.
 */
export function acceptBareArray(desc: DescMessage, json: unknown): unknown {
  if (!Array.isArray(json)) return json;
  let jsonName = bareArrayFields.get(desc.typeName);
  if (jsonName === undefined) {
    const name = hasOption(desc, messageRules)
      ? getOption(desc, messageRules).bareArrayField
      : undefined;
    jsonName = desc.fields.find((f) => f.name === name)?.jsonName ?? null;
    bareArrayFields.set(desc.typeName, jsonName);
  }
  return jsonName === null ? json : { [jsonName]: json };
}
