import {
  type DescEnum,
  type DescEnumValue,
  type DescExtension,
  type DescField,
  type DescMessage,
  type DescMethod,
  getOption,
  hasOption,
  type Registry,
} from "@bufbuild/protobuf";
import {
  type Procedure,
  type ProcedureOptionValue,
  procedureFromOption,
} from "../../src/services/procedure-shape.ts";

/** `(latchkey.v2.rules)` of a field, as options.proto declares FieldRules. */
export interface FieldRules {
  required: boolean;
  minLen?: number;
  maxLen?: number;
  pattern?: string;
  min?: bigint;
  max?: bigint;
  minItems?: number;
  maxItems?: number;
  maxProps?: number;
  maxJsonBytes?: number;
  uniqueBy?: string;
  format?: string;
}

/** `(latchkey.v2.json)` of a field, as options.proto declares JsonField. */
export interface JsonField {
  nullable: boolean;
  emitEmpty: boolean;
  emitNull: boolean;
}

/** `(latchkey.v2.message_rules)` of a message, as options.proto declares MessageRules. */
export interface MessageRules {
  exactlyOneOf: string[];
  bareArrayField?: string;
}

/** Reads our own options (options.proto) from descriptors. */
export interface Options {
  rules(field: DescField): FieldRules | undefined;
  json(field: DescField): JsonField;
  messageRules(message: DescMessage): MessageRules | undefined;
  /** The string the /v2 door uses for an enum value: its `json_value`, else its proto name. */
  jsonValue(value: DescEnumValue): string;
  /** `(latchkey.v2.procedure)` of an rpc, checked as the server checks it at start. */
  procedure(method: DescMethod, name: string): { option: ProcedureOptionValue; table: Procedure };
}

const NO_JSON: JsonField = { nullable: false, emitEmpty: false, emitNull: false };

/**
 * Finds the latchkey.v2 extensions in the registry built from the plugin request (never
 * in gen/, which `buf generate` is rewriting while this plugin runs) and reads them with
 * protobuf-es reflection.
 */
export function readOptions(registry: Registry): Options {
  const extension = (name: string): DescExtension => {
    const found = registry.getExtension(`latchkey.v2.${name}`);
    if (!found) throw new Error(`extension latchkey.v2.${name} is not in the request`);
    return found;
  };
  const rules = extension("rules");
  const json = extension("json");
  const messageRules = extension("message_rules");
  const jsonValue = extension("json_value");
  const procedure = extension("procedure");
  const auth: DescEnum | undefined = registry.getEnum("latchkey.v2.Auth");
  if (!auth) throw new Error("enum latchkey.v2.Auth is not in the request");
  return {
    rules: (field) =>
      hasOption(field, rules) ? (getOption(field, rules) as unknown as FieldRules) : undefined,
    json: (field) =>
      hasOption(field, json) ? (getOption(field, json) as unknown as JsonField) : NO_JSON,
    messageRules: (message) =>
      hasOption(message, messageRules)
        ? (getOption(message, messageRules) as unknown as MessageRules)
        : undefined,
    jsonValue: (value) =>
      hasOption(value, jsonValue) ? (getOption(value, jsonValue) as string) : value.name,
    procedure: (method, name) => {
      if (!hasOption(method, procedure)) throw new Error(`${name} has no procedure option`);
      const option = getOption(method, procedure) as unknown as ProcedureOptionValue;
      return { option, table: procedureFromOption(name, option, auth) };
    },
  };
}
