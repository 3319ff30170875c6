import { create, type DescMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Violation } from "../../../src/errors/service-error.js";
import { decodeObject, encodeJson } from "../../../src/server/json-codec.js";
import { recordBodyKeys } from "../../../src/server/presence.js";
import { validateMessage } from "../../../src/server/validation.js";
import { generatedServices } from "../../fuzz/arbitraries.js";
import { generic } from "../../generic-codec/deps.js";
import { contractMessages, jsonBody, messageInit } from "../../generic-codec/message-values.js";

// The generated codec and validator against the generic ones they replaced (a copy kept in
// test/generic-codec/ as the oracle), on every message type the contract's services reach:
// the same messages, violations, update masks and JSON text, byte for byte. CODEC_RUNS=<n>
// draws more cases per message type.
const RUNS = Number(process.env.CODEC_RUNS ?? 30);
const messages = contractMessages(await generatedServices());
/** A type's cases can hold lists of thousands of items; on a busy machine that takes seconds. */
const TIMEOUT_MS = 60_000;

/**
 * A value as text that tells apart everything a message can hold: key order, bigint from
 * number, -0, undefined members, holes, symbol-keyed members (the JSON presence) and Sets
 * in their order, Uint8Array, and the prototype.
 */
function canonical(v: unknown): string {
  return JSON.stringify(tree(v));
}

function tree(v: unknown): unknown {
  if (typeof v === "bigint") return { bigint: String(v) };
  if (v === undefined) return { undefined: true };
  if (typeof v === "number") return Object.is(v, -0) || !Number.isFinite(v) ? { n: `${v}` } : v;
  if (v === null || typeof v !== "object") return v;
  if (v instanceof Set) return { set: [...v].map(tree) };
  if (v instanceof Uint8Array) return { bytes: [...v] };
  if (Array.isArray(v)) return { array: Array.from(v, tree), own: Object.keys(v).length };
  const proto = Object.getPrototypeOf(v);
  return {
    proto: proto === Object.prototype ? "object" : proto === null ? "null" : "other",
    entries: Reflect.ownKeys(v).map((k) => [
      String(k),
      tree((v as Record<string | symbol, unknown>)[k]),
    ]),
  };
}

/** What a call returned, or the kind of error it threw (a 500 either way). */
function outcome<T>(fn: () => T): { value: T } | { threw: string } {
  try {
    return { value: fn() };
  } catch (err) {
    return { threw: (err as Error).constructor.name };
  }
}

/** Violations already collected before the call, to reach the cap at every point. */
const prefilled = fc
  .oneof(fc.constant(0), fc.nat({ max: 27 }))
  .map((n) => Array.from({ length: n }, (_, i) => ({ location: `/x/${i}`, message: "earlier" })));

function validated(
  validate: typeof validateMessage,
  desc: DescMessage,
  message: Record<string, unknown>,
  pointer: string,
  before: Violation[],
) {
  const out = [...before];
  const r = outcome(() => validate(desc, message, pointer, out));
  return canonical({ r, out });
}

describe("the generated /v2 codec and validator do what the generic ones did", () => {
  it("covers every message type of the contract", () => {
    expect(messages.length).toBeGreaterThan(100);
    const names = messages.map((d) => d.typeName);
    for (const name of ["VerifyKeyRequest", "VerifyKeyResponse", "UpdateKeyRequest"])
      expect(names).toContain(`latchkey.v2.${name}`);
  });

  it.each(messages.map((d) => [d.typeName, d] as const))(
    "decodes and validates any JSON body as a %s alike",
    (_, desc) => {
      fc.assert(
        fc.property(jsonBody(desc), fc.constantFrom("", "/keys/0"), prefilled, (body, at, pre) => {
          const old = [...pre];
          const now = [...pre];
          const a = outcome(() => generic.decodeObject(desc, body, at, old));
          const b = outcome(() => decodeObject(desc, body, at, now));
          expect(canonical({ b, now })).toBe(canonical({ b: a, now: old }));
          if (!("value" in a) || !("value" in b)) return;
          expect(validated(validateMessage, desc, b.value, at, pre)).toBe(
            validated(generic.validateMessage, desc, a.value, at, pre),
          );
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it.each(messages.map((d) => [d.typeName, d] as const))(
    "validates a %s from a binary or Connect JSON body alike",
    (_, desc) => {
      const keys = fc.subarray(desc.fields.flatMap((f) => [f.jsonName, f.name]));
      const door = fc.constantFrom("message", "binary", "connect-json");
      fc.assert(
        fc.property(messageInit(desc), door, keys, prefilled, (init, how, sent, pre) => {
          let message = create(desc, init as never) as unknown as Record<string, unknown>;
          if (how === "binary") message = fromBinary(desc, toBinary(desc, message as never));
          if (how === "connect-json") recordBodyKeys(message, new Set(sent));
          expect(validated(validateMessage, desc, message, "", pre)).toBe(
            validated(generic.validateMessage, desc, message, "", pre),
          );
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it.each(messages.map((d) => [d.typeName, d] as const))(
    "writes a %s alike from its init shape, its message and a decoded body",
    (_, desc) => {
      fc.assert(
        fc.property(messageInit(desc), jsonBody(desc), (init, body) => {
          const message = create(desc, init as never) as unknown as Record<string, unknown>;
          const decoded = generic.decodeObject(desc, body, "", []);
          for (const value of [init, message, decoded]) {
            const a = outcome(() => generic.encodeJson(desc, value));
            const b = outcome(() => encodeJson(desc, value));
            expect(b).toEqual(a);
          }
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );
});
