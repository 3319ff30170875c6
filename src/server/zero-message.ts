import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { js } from "./generated-code.js";

/**
 * The message `create(desc)` makes, as the source of an object literal, for the generated
 * decoders (json-decoder.ts): create() walks its list of the message's members on every call,
 * which was over half of what decoding a small body cost, where a literal is one allocation.
 *
 * Only for the messages whose zero value is plain: proto3 (no prototype carrying defaults),
 * no oneof groups or maps, and no bytes fields (create() gives each message the same empty
 * Uint8Array). For any other, undefined: the decoder calls create(). The literal has the same
 * members in the same order, `$typeName` first, as create() sets them; the equivalence test of
 * the codec compares the two, order and prototype included.
 */

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;

/** protobuf-es's number for a proto3 file's edition. */
const EDITION_PROTO3 = 999;

/** The zero value of an implicit-presence scalar or enum field as source, or undefined. */
function zeroSource(f: DescField): string | undefined {
  if (f.fieldKind === "enum") return String(f.enum.values[0]?.number ?? 0);
  if (f.fieldKind !== "scalar" || f.getDefaultValue() !== undefined) return undefined;
  switch (f.scalar) {
    case ScalarType.BYTES:
      return undefined;
    case ScalarType.STRING:
      return '""';
    case ScalarType.BOOL:
      return "false";
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return f.longAsString ? '"0"' : "0n";
    default:
      return "0";
  }
}

/** The member a zero message has for `f` as source (`"name": value`), "" for none, or undefined. */
function memberSource(f: DescField): string | undefined {
  // A quoted `"__proto__"` key in a literal would set the prototype, not a member.
  if (f.localName === "__proto__") return undefined;
  switch (f.fieldKind) {
    case "list":
      return `${js(f.localName)}: []`;
    case "map":
      return undefined;
    case "message":
      return "";
    default: {
      if (f.presence !== IMPLICIT) return "";
      const zero = zeroSource(f);
      return zero === undefined ? undefined : `${js(f.localName)}: ${zero}`;
    }
  }
}

/** Source of an object literal equal to `create(desc)`, or undefined when there is none. */
export function zeroMessageSource(desc: DescMessage): string | undefined {
  if (desc.file.edition !== EDITION_PROTO3) return undefined;
  const members = [`$typeName: ${js(desc.typeName)}`];
  for (const m of desc.members) {
    if (m.kind !== "field") return undefined;
    const member = memberSource(m);
    if (member === undefined) return undefined;
    if (member !== "") members.push(member);
  }
  return `{ ${members.join(", ")} }`;
}
