import type {
  AnyDesc,
  DescEnum,
  DescField,
  DescFile,
  DescMessage,
  DescMethod,
  ScalarType,
} from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { getComments } from "@bufbuild/protoplugin";
import type { FieldRules, Options } from "./options.ts";
import { scalarSchema } from "./scalars.ts";
import type { Direction, Schema } from "./schema-types.ts";

export type { Direction, Schema } from "./schema-types.ts";

const STRUCT = "google.protobuf.Struct";
const FIELD_MASK = "google.protobuf.FieldMask";
const EXPLICIT = FeatureSet_FieldPresence.EXPLICIT;
/** The fields of a response envelope, always written by the door. */
const ENVELOPE_FIELDS = ["meta", "data", "pagination"];

/** The leading comment of a descriptor as one line of text, or undefined. */
export function commentOf(desc: Exclude<AnyDesc, DescFile>): string | undefined {
  const text = getComments(desc).leading;
  if (text === undefined) return undefined;
  const joined = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join(" ");
  return joined.length > 0 ? joined : undefined;
}

/** Puts `description` first, for a document that reads well. */
export function described(schema: Schema, description: string | undefined): Schema {
  return description === undefined ? schema : { description, ...schema };
}

/** The same schema also accepting JSON null. */
export function nullable(schema: Schema): Schema {
  if (typeof schema.type === "string") return { ...schema, type: [schema.type, "null"] };
  return { anyOf: [schema, { type: "null" }] };
}

/** The update mask is derived from the body's keys on the /v2 door; it is never sent. */
function isUpdateMask(f: DescField): boolean {
  return f.name === "update_mask" && f.message?.typeName === FIELD_MASK;
}

type Value =
  | { kind: "scalar"; scalar: ScalarType }
  | { kind: "enum"; desc: DescEnum }
  | { kind: "message"; desc: DescMessage };

/** What one value of a field (one item of a list) holds. */
function fieldValue(f: DescField): Value {
  switch (f.fieldKind) {
    case "scalar":
      return { kind: "scalar", scalar: f.scalar };
    case "enum":
      return { kind: "enum", desc: f.enum };
    case "message":
      return { kind: "message", desc: f.message };
    case "list":
      if (f.listKind === "scalar") return { kind: "scalar", scalar: f.scalar };
      if (f.listKind === "enum") return { kind: "enum", desc: f.enum };
      return { kind: "message", desc: f.message };
    case "map":
      throw new Error(`${f.parent.typeName}.${f.name}: maps have no /v2 JSON form`);
  }
}

/** Messages reachable from the methods' requests and responses, and the envelopes. */
export interface Usage {
  request: Set<string>;
  response: Set<string>;
  /** Method outputs: their meta, data and pagination are always written. */
  envelopes: Set<string>;
}

/** Walks every message reachable from the methods' inputs and outputs. */
export function collectUsage(methods: readonly DescMethod[], extra: DescMessage[]): Usage {
  const usage: Usage = { request: new Set(), response: new Set(), envelopes: new Set() };
  const walk = (desc: DescMessage, into: Set<string>) => {
    if (into.has(desc.typeName) || desc.typeName === STRUCT) return;
    into.add(desc.typeName);
    for (const f of desc.fields) {
      if (isUpdateMask(f) || f.fieldKind === "map") continue;
      const v = fieldValue(f);
      if (v.kind === "message") walk(v.desc, into);
    }
  };
  for (const m of methods) {
    walk(m.input, usage.request);
    walk(m.output, usage.response);
    usage.envelopes.add(m.output.typeName);
  }
  for (const desc of extra) walk(desc, usage.response);
  return usage;
}

/** Builds the component schemas of messages and enums, each once per direction. */
export interface SchemaBuilder {
  /** A `$ref` to the component of a message for a direction, built on first use. */
  ref(desc: DescMessage, dir: Direction): Schema;
  /** A `$ref` to a component added by name. */
  add(name: string, schema: Schema): Schema;
  /** The response schema of one field of a message, and whether the door always writes it. */
  responseField(f: DescField): { schema: Schema; required: boolean };
  /** Every component built so far, sorted by name. */
  components(): Record<string, Schema>;
}

/**
 * A builder of the component schemas, following the /v2 JSON form (src/server/json-plan.ts:
 * what the door reads and writes) and the field rules (validation-plan.ts: the bounds it checks).
 */
export function createSchemaBuilder(opts: Options, usage: Usage): SchemaBuilder {
  const components = new Map<string, Schema>();
  const refTo = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

  function nameOf(desc: DescMessage | DescEnum, dir: Direction): string {
    const base = desc.typeName.slice(desc.file.proto.package.length + 1);
    // A message used on both sides gets a second component for its request form.
    return dir === "request" && usage.response.has(desc.typeName) ? `${base}Input` : base;
  }

  function enumRef(desc: DescEnum): Schema {
    const name = nameOf(desc, "response");
    if (!components.has(name)) {
      const values = desc.values.filter((v) => v.number !== 0);
      const meanings = values.map((v) => `\`${opts.jsonValue(v)}\`: ${commentOf(v) ?? ""}`.trim());
      components.set(
        name,
        described(
          { type: "string", enum: values.map((v) => opts.jsonValue(v)) },
          [commentOf(desc), ...meanings].filter((s) => s !== undefined).join("\n\n"),
        ),
      );
    }
    return refTo(name);
  }

  function valueSchema(v: Value, dir: Direction, r: FieldRules | undefined): Schema {
    switch (v.kind) {
      case "scalar":
        return scalarSchema(v.scalar, dir, r);
      case "enum":
        return enumRef(v.desc);
      case "message": {
        if (v.desc.typeName !== STRUCT) return ref(v.desc, dir);
        const schema: Schema = { type: "object" };
        if (dir === "request" && r?.maxProps !== undefined) schema.maxProperties = r.maxProps;
        return schema;
      }
    }
  }

  function requestField(f: DescField): { schema: Schema; required: boolean } {
    const r = opts.rules(f);
    let schema = valueSchema(fieldValue(f), "request", r);
    if (f.fieldKind === "list") {
      schema = { type: "array", items: schema };
      if (r?.minItems !== undefined) schema.minItems = r.minItems;
      if (r?.maxItems !== undefined) schema.maxItems = r.maxItems;
    }
    if (opts.json(f).nullable) schema = nullable(schema);
    const notes = [commentOf(f)];
    if (r?.maxJsonBytes !== undefined) {
      notes.push(
        `At most ${r.maxJsonBytes} bytes as JSON; numbers in it must be finite, integers at most 2^53-1.`,
      );
    }
    if (r?.uniqueBy !== undefined && f.message) {
      const key = f.message.fields.find((x) => x.name === r.uniqueBy);
      notes.push(`No two items may have the same \`${key?.jsonName ?? r.uniqueBy}\`.`);
    }
    const text = notes.filter((s) => s !== undefined).join(" ");
    return { schema: described(schema, text || undefined), required: r?.required ?? false };
  }

  function responseField(f: DescField): { schema: Schema; required: boolean } {
    const j = opts.json(f);
    const v = fieldValue(f);
    let schema = valueSchema(v, "response", undefined);
    let required = false;
    switch (f.fieldKind) {
      case "list":
        schema = { type: "array", items: schema };
        required = j.emitEmpty;
        break;
      case "message":
        if (j.emitEmpty) {
          required = true;
          // An unset message is written as {}, which its own required fields would refuse.
          if (v.kind === "message" && hasRequired(v.desc)) {
            schema = { anyOf: [schema, { type: "object", maxProperties: 0 }] };
          }
        } else if (j.emitNull) {
          required = true;
          schema = nullable(schema);
        }
        break;
      case "enum":
        if (j.emitNull) {
          required = true;
          schema = nullable(schema);
        }
        break;
      default:
        // Implicit scalars are always written; optional ones only when set (or as null).
        required = f.presence !== EXPLICIT || j.emitNull;
        if (f.presence === EXPLICIT && j.emitNull) schema = nullable(schema);
    }
    return { schema: described(schema, commentOf(f)), required };
  }

  function hasRequired(desc: DescMessage): boolean {
    if (desc.typeName === STRUCT) return false;
    ref(desc, "response");
    const built = components.get(nameOf(desc, "response"));
    return Array.isArray(built?.required) && built.required.length > 0;
  }

  function build(desc: DescMessage, dir: Direction): Schema {
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const f of desc.fields) {
      if (isUpdateMask(f) || f.fieldKind === "map") continue;
      const field = dir === "request" ? requestField(f) : responseField(f);
      properties[f.jsonName] = field.schema;
      if (field.required) required.push(f.jsonName);
    }
    if (dir === "response" && usage.envelopes.has(desc.typeName)) {
      for (const name of ENVELOPE_FIELDS) {
        if (name in properties && !required.includes(name)) required.push(name);
      }
    }
    const order = Object.keys(properties);
    required.sort((a, b) => order.indexOf(a) - order.indexOf(b));
    const schema: Schema = { type: "object", properties };
    if (required.length > 0) schema.required = required;
    schema.additionalProperties = false;
    const group = dir === "request" ? (opts.messageRules(desc)?.exactlyOneOf ?? []) : [];
    if (group.length > 0) {
      schema.oneOf = group.map((name) => {
        const f = desc.fields.find((x) => x.name === name);
        if (!f) throw new Error(`${desc.typeName}: exactly_one_of names no field ${name}`);
        return { required: [f.jsonName] };
      });
    }
    return described(schema, commentOf(desc));
  }

  function ref(desc: DescMessage, dir: Direction): Schema {
    const name = nameOf(desc, dir);
    if (!components.has(name)) {
      components.set(name, {}); // a placeholder, for messages that refer to themselves
      components.set(name, build(desc, dir));
    }
    return refTo(name);
  }

  return {
    ref,
    add(name, schema) {
      if (components.has(name)) throw new Error(`component ${name} exists already`);
      components.set(name, schema);
      return refTo(name);
    },
    responseField,
    components: () =>
      Object.fromEntries([...components].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
}
