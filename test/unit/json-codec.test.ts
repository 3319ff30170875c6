import { create, createFileRegistry, type DescMessage } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  file_google_protobuf_field_mask,
  file_google_protobuf_struct,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { CreditsSchema, RatelimitRequestSchema } from "../../gen/latchkey/v2/common_pb.js";
import { VerifyKeyCode, VerifyKeyResponseSchema } from "../../gen/latchkey/v2/keys_pb.js";
import type { Violation } from "../../src/errors/service-error.js";
import { decodeObject, encodeJson, encodeMessage } from "../../src/server/json-codec.js";
import { isPresent } from "../../src/server/presence.js";
import { SERVED_SERVICES } from "../../src/services/procedures.js";

// A message shaped like an update request, built in code so the codec is tested on
// every field kind before the real update procedures exist.
const file = create(FileDescriptorProtoSchema, {
  name: "codec_test.proto",
  package: "codectest",
  syntax: "proto3",
  dependency: ["google/protobuf/field_mask.proto", "google/protobuf/struct.proto"],
  messageType: [
    {
      name: "UpdateThing",
      field: [
        {
          name: "thing_id",
          number: 1,
          type: Type.STRING,
          label: Label.OPTIONAL,
          jsonName: "thingId",
        },
        {
          name: "count",
          number: 2,
          type: Type.INT64,
          label: Label.OPTIONAL,
          jsonName: "count",
          proto3Optional: true,
          oneofIndex: 0,
        },
        { name: "tags", number: 3, type: Type.STRING, label: Label.REPEATED, jsonName: "tags" },
        {
          name: "meta",
          number: 4,
          type: Type.MESSAGE,
          typeName: ".google.protobuf.Struct",
          label: Label.OPTIONAL,
          jsonName: "meta",
        },
        {
          name: "update_mask",
          number: 5,
          type: Type.MESSAGE,
          typeName: ".google.protobuf.FieldMask",
          label: Label.OPTIONAL,
          jsonName: "updateMask",
        },
        { name: "small", number: 6, type: Type.INT32, label: Label.OPTIONAL, jsonName: "small" },
        { name: "flag", number: 7, type: Type.BOOL, label: Label.OPTIONAL, jsonName: "flag" },
      ],
      oneofDecl: [{ name: "_count" }],
    },
  ],
});
const registry = createFileRegistry(file, (name) =>
  name === "google/protobuf/field_mask.proto"
    ? file_google_protobuf_field_mask
    : name === "google/protobuf/struct.proto"
      ? file_google_protobuf_struct
      : undefined,
);
const Thing = registry.getMessage("codectest.UpdateThing") as DescMessage;

function decode(desc: DescMessage, json: unknown) {
  const out: Violation[] = [];
  const message = decodeObject(desc, json, "", out);
  return { message, violations: out };
}

describe("the /v2 JSON codec", () => {
  it("reads int64 from JSON numbers and derives the update mask from the keys present", () => {
    const { message, violations } = decode(Thing, { thingId: "t1", count: 42, tags: ["a"] });
    expect(violations).toEqual([]);
    expect(message.count).toBe(42n);
    expect((message.updateMask as { paths: string[] }).paths).toEqual([
      "thing_id",
      "count",
      "tags",
    ]);
  });

  it("records null on a nullable field as present and unset", () => {
    const nullable = decode(CreditsSchema, { remaining: null });
    expect(nullable.violations).toEqual([]);
    expect(nullable.message.remaining).toBeUndefined();
    expect(isPresent(nullable.message, CreditsSchema.field.remaining)).toBe(true);
  });

  it.each([
    ["a string int64", { count: "42" }, "/count", /not a string/],
    ["an integer above 2^53", { count: 2 ** 53 + 2 }, "/count", /2\^53/],
    ["a fraction", { count: 1.5 }, "/count", /integer/],
    ["a snake_case name", { thing_id: "x" }, "/thing_id", /use 'thingId'/],
    ["an updateMask", { updateMask: "count" }, "/updateMask", /fields present/],
    ["an unknown field", { nope: 1 }, "/nope", /unknown field/],
    ["null on a non-nullable field", { thingId: null }, "/thingId", /must not be null/],
    ["a string where a list belongs", { tags: "a" }, "/tags", /array/],
    ["a null list item", { tags: ["a", null] }, "/tags/1", /must not be null/],
    ["a number where a string belongs", { thingId: 5 }, "/thingId", /string/],
    ["a string where a boolean belongs", { flag: "true" }, "/flag", /boolean/],
    ["an int32 out of range", { small: 2 ** 31 }, "/small", /between/],
    ["an array where a Struct belongs", { meta: [] }, "/meta", /object/],
    ["a field name with a slash", { "a/b": 1 }, "/a~1b", /unknown field/],
  ])("rejects %s at its JSON Pointer", (_, json, location, message) => {
    const { violations } = decode(Thing, json);
    expect(violations).toHaveLength(1);
    expect(violations[0]?.location).toBe(location);
    expect(violations[0]?.message).toMatch(message);
  });

  it("rejects a body that is not an object", () => {
    expect(decode(Thing, [1]).violations).toEqual([
      { location: "", message: "must be a JSON object" },
    ]);
    expect(decode(Thing, "x").violations).toHaveLength(1);
  });

  it("reads enums by the spec's strings and nested messages with pointers", () => {
    const ok = decode(CreditsSchema, { remaining: 5, refill: { interval: "daily", amount: 10 } });
    expect(ok.violations).toEqual([]);
    const bad = decode(CreditsSchema, { refill: { interval: "REFILL_INTERVAL_DAILY", amount: 1 } });
    expect(bad.violations).toEqual([
      { location: "/refill/interval", message: "must be one of: daily, monthly" },
    ]);
  });

  it("writes int64 as numbers, enums as strings, and omits unset optional fields", () => {
    const credits = decode(CreditsSchema, {
      remaining: 7,
      refill: { interval: "monthly", amount: 10, refillDay: 31 },
    });
    expect(encodeMessage(CreditsSchema, credits.message)).toEqual({
      remaining: 7,
      refill: { interval: "monthly", amount: 10, refillDay: 31 },
    });
    // emit_null: unlimited credits are written as remaining: null.
    expect(encodeMessage(CreditsSchema, create(CreditsSchema) as never)).toEqual({
      remaining: null,
    });
    const limit = create(RatelimitRequestSchema, { name: "n", limit: 10n, duration: 1000n });
    expect(encodeMessage(RatelimitRequestSchema, limit as never)).toEqual({
      name: "n",
      limit: 10,
      duration: 1000,
    });
  });
});

describe("encodeJson: /v2 text written straight from a message or its init shape", () => {
  const outputs = new Map<string, DescMessage>();
  const collect = (d: DescMessage) => {
    if (outputs.has(d.typeName)) return;
    outputs.set(d.typeName, d);
    for (const f of d.fields) if (f.message) collect(f.message);
  };
  for (const s of SERVED_SERVICES) for (const m of s.methods) collect(m.output);

  it("answers an empty init shape exactly as the message create() makes of it, for every answer type", () => {
    expect(outputs.size).toBeGreaterThan(40);
    for (const desc of outputs.values()) {
      expect(encodeJson(desc, {}), desc.typeName).toBe(encodeJson(desc, create(desc) as never));
    }
  });

  it("writes a filled verification alike from its init shape and from its message", () => {
    const init = {
      data: {
        valid: true,
        code: VerifyKeyCode.VALID,
        keyId: 'key_"quoted"\n',
        permissions: ["a.b", "c"],
        roles: [],
        ratelimits: [
          { id: "rl_1", name: "requests", limit: 10n, duration: 60_000n, remaining: 9n, reset: 1n },
        ],
        credits: 0n,
        identity: { id: "id_1", externalId: "ext", ratelimits: [] },
        meta: { plan: "pro", nested: { n: 1, list: [true, null] } },
      },
    };
    const text = encodeJson(VerifyKeyResponseSchema, init as never);
    expect(text).toBe(
      encodeJson(VerifyKeyResponseSchema, create(VerifyKeyResponseSchema, init) as never),
    );
    expect(JSON.parse(text)).toEqual({
      data: {
        valid: true,
        code: "VALID",
        keyId: 'key_"quoted"\n',
        permissions: ["a.b", "c"],
        ratelimits: [
          {
            id: "rl_1",
            name: "requests",
            limit: 10,
            duration: 60000,
            remaining: 9,
            reset: 1,
            exceeded: false,
            autoApply: false,
          },
        ],
        credits: 0,
        identity: { id: "id_1", externalId: "ext" },
        meta: { plan: "pro", nested: { n: 1, list: [true, null] } },
      },
    });
  });

  it("writes what JSON.stringify would of the same values: non-finite numbers as null, unknown enum values left out", () => {
    const limit = { name: "n", limit: 10n, duration: 1000n, cost: undefined } as never;
    expect(encodeJson(RatelimitRequestSchema, limit)).toBe(
      '{"name":"n","limit":10,"duration":1000}',
    );
    const odd = { data: { valid: false, code: 999 } } as never;
    expect(JSON.parse(encodeJson(VerifyKeyResponseSchema, odd)).data.code).toBeUndefined();
  });
});
