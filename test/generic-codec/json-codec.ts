// A copy of the generic /v2 JSON codec as it was before src/server/json-codec.ts became a
// per-message specialiser: the oracle the equivalence tests compare the specialised codec
// with, and the "before" side of the `codec` benchmark. It takes its project dependencies as
// arguments so that the benchmark can hand it the built modules of dist/ (Node runs this file
// by stripping its types, and cannot resolve the sources' `.js` imports) and the tests the
// sources. Do not change its behaviour: it is the reference.
import {
  create,
  type DescEnum,
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import type * as Options from "../../gen/latchkey/v2/options_pb.ts";
import type * as FieldRules from "../../src/domain/field-rules.ts";
import type * as Networks from "../../src/domain/networks.ts";
import type { Violation } from "../../src/errors/service-error.ts";
import type * as Presence from "../../src/server/presence.ts";

/** What the generic codec needs of the project: the sources' modules or the built ones. */
export interface GenericCodecDeps {
  options: Pick<typeof Options, "json" | "json_value" | "message_rules" | "rules">;
  fieldRules: typeof FieldRules;
  networks: Pick<typeof Networks, "cidrProblem" | "ipProblem">;
  presence: typeof Presence;
  unexpected: (cause: unknown) => Error;
}

/** The generic /v2 JSON codec (decodeObject, encodeJson) over `deps`. */
export function genericJsonCodec(deps: GenericCodecDeps) {
  const { json: jsonOption, json_value: jsonValue } = deps.options;
  const { escapePointer, violationsFull } = deps.fieldRules;
  const { jsonPresenceOf, recordJsonPresence } = deps.presence;

  /**
   * The /v2 JSON form of our messages. It differs from protobuf JSON on purpose, to be the
   * form existing JSON clients send: int64 are JSON numbers, enums are the documented strings
   * ("VALID", not the proto name), only the
   * lowerCamel names are accepted, unknown keys are errors, null is accepted only where
   * the field is declared nullable, and the update mask is derived from the keys present.
   */

  interface FieldPlan {
    field: DescField;
    /** `"jsonName":`, the start of the member in /v2 JSON text. */
    key: string;
    pointerToken: string;
    nullable: boolean;
    emitEmpty: boolean;
    emitNull: boolean;
    isStruct: boolean;
  }

  interface MessagePlan {
    fields: FieldPlan[];
    byJsonName: Map<string, FieldPlan>;
    byProtoName: Map<string, FieldPlan>;
    /** The `update_mask` field, when the message is an update request. */
    updateMask?: DescField;
  }

  const plans = new Map<string, MessagePlan>();

  function planFor(desc: DescMessage): MessagePlan {
    let plan = plans.get(desc.typeName);
    if (plan) return plan;
    const fields: FieldPlan[] = [];
    let updateMask: DescField | undefined;
    for (const field of desc.fields) {
      if (field.name === "update_mask" && field.message?.typeName === "google.protobuf.FieldMask") {
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
    plan = {
      fields,
      byJsonName: new Map(fields.map((p) => [p.field.jsonName, p])),
      byProtoName: new Map(fields.map((p) => [p.field.name, p])),
      ...(updateMask ? { updateMask } : {}),
    };
    plans.set(desc.typeName, plan);
    return plan;
  }

  interface EnumPlan {
    toNumber: Map<string, number>;
    /** A value's documented text as a JSON string, ready to write. */
    quoted: Map<number, string>;
    allowed: string;
  }
  const enumPlans = new Map<string, EnumPlan>();

  function enumPlanFor(desc: DescEnum): EnumPlan {
    let plan = enumPlans.get(desc.typeName);
    if (plan) return plan;
    const toNumber = new Map<string, number>();
    const quoted = new Map<number, string>();
    for (const v of desc.values) {
      if (v.number === 0) continue;
      const s = hasOption(v, jsonValue) ? getOption(v, jsonValue) : v.name;
      toNumber.set(s, v.number);
      quoted.set(v.number, JSON.stringify(s));
    }
    plan = { toNumber, quoted, allowed: [...toNumber.keys()].join(", ") };
    enumPlans.set(desc.typeName, plan);
    return plan;
  }

  function isPlainObject(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
  }

  const INT32_RANGE: [number, number] = [-2147483648, 2147483647];
  const UINT32_RANGE: [number, number] = [0, 4294967295];

  /** Reads one scalar; returns undefined and records a violation when the JSON type is wrong. */
  function readScalar(type: ScalarType, v: unknown, at: string, out: Violation[]): unknown {
    switch (type) {
      case ScalarType.STRING:
        if (typeof v === "string") return v;
        out.push({ location: at, message: "must be a string" });
        return undefined;
      case ScalarType.BOOL:
        if (typeof v === "boolean") return v;
        out.push({ location: at, message: "must be a boolean" });
        return undefined;
      case ScalarType.DOUBLE:
      case ScalarType.FLOAT:
        if (typeof v === "number") return v;
        out.push({ location: at, message: "must be a number" });
        return undefined;
      case ScalarType.BYTES:
        out.push({ location: at, message: "bytes are not accepted in JSON" });
        return undefined;
      default:
        break;
    }
    if (typeof v !== "number") {
      out.push({
        location: at,
        message:
          typeof v === "string" ? "must be a JSON number, not a string" : "must be an integer",
      });
      return undefined;
    }
    if (!Number.isInteger(v)) {
      out.push({ location: at, message: "must be an integer" });
      return undefined;
    }
    if (!Number.isSafeInteger(v)) {
      out.push({ location: at, message: "must be an integer between -(2^53-1) and 2^53-1" });
      return undefined;
    }
    switch (type) {
      case ScalarType.INT32:
      case ScalarType.SINT32:
      case ScalarType.SFIXED32:
      case ScalarType.UINT32:
      case ScalarType.FIXED32: {
        const [lo, hi] =
          type === ScalarType.UINT32 || type === ScalarType.FIXED32 ? UINT32_RANGE : INT32_RANGE;
        if (v < lo || v > hi) {
          out.push({ location: at, message: `must be between ${lo} and ${hi}` });
          return undefined;
        }
        return v;
      }
      default:
        if (v < 0 && (type === ScalarType.UINT64 || type === ScalarType.FIXED64)) {
          out.push({ location: at, message: "must not be negative" });
          return undefined;
        }
        return BigInt(v);
    }
  }

  function readEnum(desc: DescEnum, v: unknown, at: string, out: Violation[]): number | undefined {
    const plan = enumPlanFor(desc);
    const n = typeof v === "string" ? plan.toNumber.get(v) : undefined;
    if (n === undefined) out.push({ location: at, message: `must be one of: ${plan.allowed}` });
    return n;
  }

  function readSingle(
    p: FieldPlan,
    kind: "scalar" | "enum" | "message",
    v: unknown,
    at: string,
    out: Violation[],
  ): unknown {
    const f = p.field;
    if (kind === "scalar") return readScalar(f.scalar as ScalarType, v, at, out);
    if (kind === "enum") return readEnum(f.enum as DescEnum, v, at, out);
    if (p.isStruct) {
      if (isPlainObject(v)) return v;
      out.push({ location: at, message: "must be a JSON object" });
      return undefined;
    }
    return decodeObject(f.message as DescMessage, v, at, out);
  }

  /**
   * Reads the items of a list field. A string in a list of strings is taken as is, with no
   * pointer built for it (one is built only for an item that fails): a request can carry
   * some 100,000 of them, and this keeps the cost of reading one to a type check.
   */
  function readList(p: FieldPlan, v: unknown[], at: string, out: Violation[]): unknown[] {
    const f = p.field;
    const kind = f.fieldKind === "list" ? f.listKind : "scalar";
    const strings =
      f.fieldKind === "list" && f.listKind === "scalar" && f.scalar === ScalarType.STRING;
    const items: unknown[] = [];
    for (let i = 0; i < v.length && !violationsFull(out); i++) {
      const item = v[i];
      if (strings && typeof item === "string") {
        items.push(item);
        continue;
      }
      if (item === null) {
        out.push({ location: `${at}/${i}`, message: "must not be null" });
        continue;
      }
      items.push(readSingle(p, kind, item, `${at}/${i}`, out));
    }
    return items;
  }

  /**
   * Decodes a JSON value into a message of `desc`, appending a violation for every key
   * or value the /v2 form does not accept. Always returns a message (possibly partial):
   * the caller decides what to do with the violations. It stops once `out` holds more than
   * MAX_VIOLATIONS: the answer lists no more, so looking further would be wasted work.
   */
  function decodeObject(
    desc: DescMessage,
    json: unknown,
    pointer: string,
    out: Violation[],
  ): Record<string, unknown> {
    const message = create(desc) as unknown as Record<string, unknown>;
    if (!isPlainObject(json)) {
      out.push({ location: pointer, message: "must be a JSON object" });
      return message;
    }
    const plan = planFor(desc);
    const present = new Set<string>();
    for (const key of Object.keys(json)) {
      if (violationsFull(out)) break;
      const v = json[key];
      const at = `${pointer}/${escapePointer(key)}`;
      const p = plan.byJsonName.get(key);
      if (!p) {
        const alias = plan.byProtoName.get(key);
        if (alias)
          out.push({ location: at, message: `unknown field: use '${alias.field.jsonName}'` });
        else if (plan.updateMask && key === "updateMask") {
          out.push({
            location: at,
            message: "is not accepted: the fields present in the body say what to update",
          });
        } else out.push({ location: at, message: "unknown field" });
        continue;
      }
      const f = p.field;
      present.add(f.localName);
      if (v === null) {
        if (!p.nullable) out.push({ location: at, message: "must not be null" });
        continue;
      }
      if (f.fieldKind === "list") {
        if (!Array.isArray(v)) {
          out.push({ location: at, message: "must be an array" });
          continue;
        }
        message[f.localName] = readList(p, v, at, out);
      } else if (f.fieldKind === "map") {
        out.push({ location: at, message: "maps are not accepted" });
      } else {
        const value = readSingle(p, f.fieldKind, v, at, out);
        if (value !== undefined) message[f.localName] = value;
      }
    }
    recordJsonPresence(message, present);
    if (plan.updateMask) {
      const paths: string[] = [];
      for (const p of plan.fields) {
        if (!present.has(p.field.localName)) continue;
        paths.push(p.field.name);
        if (p.field.fieldKind === "message" && !p.isStruct) {
          // A nested object's keys go into the mask too (`credits.remaining`): protobuf cannot
          // tell a member sent as null from one left out, and an update may treat them apart.
          const sent = jsonPresenceOf(message[p.field.localName] as object | undefined);
          for (const sub of (p.field.message as DescMessage).fields)
            if (sent?.has(sub.localName)) paths.push(`${p.field.name}.${sub.name}`);
        }
      }
      message[plan.updateMask.localName] = create(FieldMaskSchema, { paths });
    }
    return message;
  }

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

  function singleText(
    p: FieldPlan,
    kind: "scalar" | "enum" | "message",
    v: unknown,
  ): string | undefined {
    if (kind === "scalar") return scalarText(v);
    if (kind === "enum") return enumPlanFor(p.field.enum as DescEnum).quoted.get(v as number);
    if (p.isStruct) return JSON.stringify(v);
    return encodeJson(p.field.message as DescMessage, v as Record<string, unknown>);
  }

  /** One member, `"name":value`, or undefined when it is left out. */
  function memberText(p: FieldPlan, v: unknown): string | undefined {
    const f = p.field;
    switch (f.fieldKind) {
      case "list": {
        const items = (v as unknown[] | undefined) ?? [];
        if (items.length === 0 && !p.emitEmpty) return undefined;
        let text = "";
        for (let i = 0; i < items.length; i++) {
          text += `${i === 0 ? "" : ","}${singleText(p, f.listKind, items[i]) ?? "null"}`;
        }
        return `${p.key}[${text}]`;
      }
      case "map":
        return undefined;
      case "enum": {
        if (v !== undefined && v !== 0) {
          const text = singleText(p, "enum", v);
          return text === undefined ? undefined : p.key + text;
        }
        return p.emitNull ? `${p.key}null` : undefined;
      }
      case "message":
        if (v !== undefined) {
          const text = singleText(p, "message", v);
          return text === undefined ? undefined : p.key + text;
        }
        if (p.emitEmpty) return `${p.key}{}`;
        return p.emitNull ? `${p.key}null` : undefined;
      default: {
        // A handler may answer with a message's init shape (the /v2 door does not make the
        // message): an implicit-presence scalar it left out has its zero value.
        const value =
          v === undefined && f.presence === IMPLICIT ? scalarZero(f.scalar) : (v as unknown);
        if (value !== undefined) {
          const text = singleText(p, "scalar", value);
          return text === undefined ? undefined : p.key + text;
        }
        return p.emitNull ? `${p.key}null` : undefined;
      }
    }
  }

  /**
   * Writes a message, or the init shape of one, as /v2 JSON text: int64 as numbers, enums as the
   * documented strings, implicit scalars always written, unset optional fields and empty lists
   * omitted unless the field asks for `emit_empty` or `emit_null`. Written straight to text,
   * without an intermediate object for JSON.stringify to walk again: this runs on every answer.
   */
  function encodeJson(desc: DescMessage, message: Record<string, unknown>): string {
    let text = "{";
    let first = true;
    for (const p of planFor(desc).fields) {
      const member = memberText(p, message[p.field.localName]);
      if (member === undefined) continue;
      text += first ? member : `,${member}`;
      first = false;
    }
    return `${text}}`;
  }

  return { decodeObject, encodeJson };
}
