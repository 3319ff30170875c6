import { create, createFileRegistry, type DescMessage, setExtension } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldOptionsSchema,
  FileDescriptorProtoSchema,
  MessageOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import {
  FieldRulesSchema,
  MessageRulesSchema,
  message_rules as messageRules,
  rules,
} from "../../../gen/latchkey/v2/options_pb.js";
import { catalog } from "../../../src/errors/catalog.js";
import { ServiceError, type Violation } from "../../../src/errors/service-error.js";
import { validateMessage } from "../../../src/server/validation.js";

const STRING = FieldDescriptorProto_Type.STRING;
const MESSAGE = FieldDescriptorProto_Type.MESSAGE;
const OPTIONAL = FieldDescriptorProto_Label.OPTIONAL;
const REPEATED = FieldDescriptorProto_Label.REPEATED;

/** A message of a contract whose rules name a field that does not exist. */
function brokenContract(): { exactlyOne: DescMessage; uniqueBy: DescMessage; holder: DescMessage } {
  const messageOptions = create(MessageOptionsSchema);
  setExtension(
    messageOptions,
    messageRules,
    create(MessageRulesSchema, { exactlyOneOf: ["nope"] }),
  );
  const fieldOptions = create(FieldOptionsSchema);
  setExtension(fieldOptions, rules, create(FieldRulesSchema, { uniqueBy: "nope" }));
  const file = create(FileDescriptorProtoSchema, {
    name: "contract_fault.proto",
    package: "contractfault",
    syntax: "proto3",
    messageType: [
      {
        name: "ExactlyOne",
        field: [{ name: "a", jsonName: "a", number: 1, type: STRING, label: OPTIONAL }],
        options: messageOptions,
      },
      {
        name: "Item",
        field: [{ name: "id", jsonName: "id", number: 1, type: STRING, label: OPTIONAL }],
      },
      {
        name: "UniqueBy",
        field: [
          {
            name: "items",
            jsonName: "items",
            number: 1,
            type: MESSAGE,
            typeName: ".contractfault.Item",
            label: REPEATED,
            options: fieldOptions,
          },
        ],
      },
      {
        name: "Holder",
        field: [
          { name: "name", jsonName: "name", number: 1, type: STRING, label: OPTIONAL },
          {
            name: "broken",
            jsonName: "broken",
            number: 2,
            type: MESSAGE,
            typeName: ".contractfault.ExactlyOne",
            label: OPTIONAL,
          },
        ],
      },
    ],
  });
  const registry = createFileRegistry(file, () => undefined);
  return {
    exactlyOne: registry.getMessage("contractfault.ExactlyOne") as DescMessage,
    uniqueBy: registry.getMessage("contractfault.UniqueBy") as DescMessage,
    holder: registry.getMessage("contractfault.Holder") as DescMessage,
  };
}

/** What checking `body` against `desc` throws. */
function thrownBy(desc: DescMessage, body: Record<string, unknown>): unknown {
  const out: Violation[] = [];
  try {
    validateMessage(desc, body, "", out);
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("a contract rule that names no field", () => {
  it("is the catalog's internal error (500 with only the request id public), not a bare TypeError", () => {
    const { exactlyOne, uniqueBy } = brokenContract();
    for (const [desc, body] of [
      [exactlyOne, { a: "x" }],
      [uniqueBy, { items: [{ id: "1" }] }],
    ] as const) {
      const err = thrownBy(desc, body);
      expect(err).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).entry).toBe(catalog.unexpectedError);
      expect((err as ServiceError).detail).not.toContain("nope");
      expect(((err as ServiceError).cause as Error).message).toContain("names no field");
    }
  });

  it("is found when a request first reaches the broken message, and on every such request, not before", () => {
    const { holder } = brokenContract();
    // The validator of a message is generated when a value of it is first checked: a holder
    // whose broken member is left out is checked as usual.
    expect(thrownBy(holder, { name: "x" })).toBeUndefined();
    for (let i = 0; i < 2; i++) {
      const err = thrownBy(holder, { name: "x", broken: { a: "y" } });
      expect((err as ServiceError).entry).toBe(catalog.unexpectedError);
    }
  });
});
