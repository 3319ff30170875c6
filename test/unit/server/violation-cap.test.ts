import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CreateIdentityRequestSchema } from "../../../gen/latchkey/v2/identities_pb.js";
import { SetPermissionsRequestSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { MAX_VIOLATIONS } from "../../../src/domain/field-rules.js";
import { errors, type Violation } from "../../../src/errors/service-error.js";
import { decodeObject } from "../../../src/server/json-codec.js";
import { validateMessage } from "../../../src/server/validation.js";

/** An array that counts how many of its items are read. */
function counted<T>(items: T[]): { list: T[]; reads: () => number } {
  let reads = 0;
  const list = new Proxy(items, {
    get(target, prop, receiver) {
      if (typeof prop === "string" && /^\d+$/.test(prop)) reads++;
      return Reflect.get(target, prop, receiver);
    },
  });
  return { list, reads: () => reads };
}

describe("the violation cap", () => {
  it("decoding stops reading a list once it has found enough problems", () => {
    const { list, reads } = counted(new Array<unknown>(10_000).fill(1));
    const out: Violation[] = [];
    decodeObject(SetPermissionsRequestSchema, { keyId: "key_x", permissions: list }, "", out);
    expect(out).toHaveLength(MAX_VIOLATIONS + 1);
    expect(reads()).toBeLessThanOrEqual(MAX_VIOLATIONS + 1);
  });

  it("decoding stops at the cap over unknown keys too", () => {
    const body = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    const out: Violation[] = [];
    decodeObject(SetPermissionsRequestSchema, body, "", out);
    expect(out).toHaveLength(MAX_VIOLATIONS + 1);
  });

  it("validation stops reading a list once it has found enough problems", () => {
    const { list, reads } = counted(new Array<string>(1000).fill("a"));
    const message = create(SetPermissionsRequestSchema, { keyId: "key_x" });
    message.permissions = list;
    const out: Violation[] = [];
    validateMessage(SetPermissionsRequestSchema, message as never, "", out);
    expect(out).toHaveLength(MAX_VIOLATIONS + 1);
    expect(reads()).toBeLessThanOrEqual(MAX_VIOLATIONS + 1);
  });

  it("the uniqueness check stops at the cap as well", () => {
    const ratelimits = new Array(50).fill({ name: "same", limit: 1n, duration: 1000n });
    const message = create(CreateIdentityRequestSchema, { externalId: "user", ratelimits });
    const out: Violation[] = [];
    validateMessage(CreateIdentityRequestSchema, message as never, "", out);
    expect(out).toHaveLength(MAX_VIOLATIONS + 1);
  });

  it("an answer lists at most the cap and says that more were left out", () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ location: `/a/${i}`, message: "bad" }));
    const err = errors.invalidInput(many);
    expect(err.violations).toHaveLength(MAX_VIOLATIONS);
    expect(err.detail).toBe(
      `/a/0: bad (and more: only the first ${MAX_VIOLATIONS} problems are listed)`,
    );
    const few = errors.invalidInput(many.slice(0, 3));
    expect(few.violations).toHaveLength(3);
    expect(few.detail).toBe("/a/0: bad (and 2 more)");
  });
});
