import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { VerifyKeyRequestSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { idempotencyHash } from "../../../src/domain/idempotency.js";

const request = (init: Parameters<typeof create<typeof VerifyKeyRequestSchema>>[1]) =>
  create(VerifyKeyRequestSchema, init);
const hashOf = (
  init: Parameters<typeof request>[0],
  caller = "rk_1",
  procedure = "keys.verifyKey",
) => idempotencyHash(procedure, caller, VerifyKeyRequestSchema, request(init));

describe("idempotencyHash", () => {
  it("leaves the idempotency key out and ignores the order fields were given in", () => {
    const a = hashOf({ key: "sk_1", tags: ["a"], credits: { cost: 2n }, idempotencyKey: "x" });
    const b = hashOf({ credits: { cost: 2n }, idempotencyKey: "y", tags: ["a"], key: "sk_1" });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it("tells apart any change to what is asked, the caller and the procedure", () => {
    const base = { key: "sk_1", credits: { cost: 2n } };
    const hashes = [
      hashOf(base),
      hashOf({ ...base, key: "sk_2" }),
      hashOf({ ...base, credits: { cost: 3n } }),
      hashOf({ key: "sk_1" }),
      hashOf({ ...base, tags: ["a"] }),
      hashOf({ ...base, permissions: "a" }),
      hashOf({ ...base, ratelimits: [{ name: "abc" }] }),
      hashOf({ ...base, apiId: "api_1" }),
      hashOf(base, "rk_2"),
      hashOf(base, "rk_1", "keys.updateCredits"),
    ];
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it("does not change the request it hashes", () => {
    const r = request({ key: "sk_1", idempotencyKey: "x" });
    idempotencyHash("keys.verifyKey", "rk_1", VerifyKeyRequestSchema, r);
    expect(r.idempotencyKey).toBe("x");
  });
});
