import { type DescField, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";

const EXPLICIT = FeatureSet_FieldPresence.EXPLICIT;

/**
 * Which fields a JSON request actually carried, per decoded message. Protobuf cannot tell
 * an omitted `0` from a sent one; the /v2 door can, and it records it here so the
 * validator reports "is required" for an omitted field whatever its type.
 */
const jsonPresence = Symbol("fields present in JSON");

/**
 * The top-level keys of a protobuf JSON body (Connect, gRPC or gRPC-web with the JSON codec),
 * by JSON or proto name. protobuf-es decodes an omitted list and `[]` alike; these keys tell
 * them apart for a required list.
 */
const bodyKeys = Symbol("keys of a protobuf JSON body");

type WithPresence = { [jsonPresence]?: Set<string>; [bodyKeys]?: ReadonlySet<string> };

/**
 * Records the local names of the fields a JSON object carried for `message`, on a
 * symbol property: protobuf-es reads messages by their descriptors, so it is invisible
 * to serialisation, and it is cheaper than a WeakMap on the hot path.
 */
export function recordJsonPresence(message: object, localNames: Set<string>): void {
  (message as WithPresence)[jsonPresence] = localNames;
}

/** The local names of the fields a JSON object carried for `message`, if it came from one. */
export function jsonPresenceOf(message: object | undefined): ReadonlySet<string> | undefined {
  return (message as WithPresence | undefined)?.[jsonPresence];
}

/** Records the top-level keys a protobuf JSON body carried for `message` (see bodyKeys). */
export function recordBodyKeys(message: object, keys: ReadonlySet<string>): void {
  (message as WithPresence)[bodyKeys] = keys;
}

/**
 * True when a required field is satisfied. Binary protobuf cannot tell an implicit number
 * or bool sent as 0/false from one left out, so on the gRPC and Connect doors such a field
 * counts as given and its bounds decide; the /v2 door knows, and requires the key. A required
 * list must be a key of a JSON body (on the /v2 door, or of a Connect or gRPC JSON body at
 * the top level), `[]` included; binary protobuf has no way to say `[]`, so there an empty
 * list counts as given.
 */
export function satisfiesRequired(message: Record<string, unknown>, field: DescField): boolean {
  if (isPresent(message, field)) return true;
  const m = message as WithPresence;
  if (m[jsonPresence] !== undefined) return false;
  if (field.fieldKind === "list") {
    const keys = m[bodyKeys];
    return keys === undefined || keys.has(field.jsonName) || keys.has(field.name);
  }
  return (
    field.fieldKind === "scalar" &&
    field.presence !== EXPLICIT &&
    field.scalar !== ScalarType.STRING &&
    field.scalar !== ScalarType.BYTES
  );
}

/** True when `field` is present in `message`: as sent in JSON, else by protobuf presence. */
export function isPresent(message: Record<string, unknown>, field: DescField): boolean {
  const sent = (message as WithPresence)[jsonPresence];
  if (sent) return sent.has(field.localName);
  const value = message[field.localName];
  switch (field.fieldKind) {
    case "list":
      return (value as unknown[]).length > 0;
    case "map":
      return Object.keys(value as object).length > 0;
    case "message":
      return value !== undefined;
    default:
      if (value === undefined) return false;
      if (field.presence === EXPLICIT) return true;
      // Implicit presence: the default value means "not sent".
      return value !== "" && value !== 0 && value !== false && value !== 0n;
  }
}
