import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseBearer } from "../../../src/domain/authorization-header.js";
import { newId } from "../../../src/domain/ids.js";
import { base58Encode, generateKey, hashKey, keyStart } from "../../../src/domain/key-material.js";

describe("key material", () => {
  it.each([
    [[], ""],
    [[0], "1"],
    [[0, 0, 1], "112"],
    [[0x61], "2g"],
    [[0x62, 0x62, 0x62], "a3gV"],
    [[0xff, 0xff], "LUv"],
    [[...Buffer.from("hello world")], "StV1DL6CwTryKyV"],
  ])("encodes %j as Base58 %s", (bytes, expected) => {
    expect(base58Encode(Uint8Array.from(bytes))).toBe(expected);
  });

  it("generates prefixed keys from the Base58 alphabet", () => {
    const key = generateKey("sk_live", 16);
    expect(key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]{20,23}$/);
    expect(generateKey(undefined, 16)).toMatch(/^[1-9A-HJ-NP-Za-km-z]{20,23}$/);
    expect(generateKey("p", 32)).not.toBe(generateKey("p", 32));
  });

  it("hashes the full key string with SHA-256 in padded base64", () => {
    const key = "prefix_abc";
    expect(hashKey(key)).toBe(createHash("sha256").update(key).digest("base64"));
    expect(hashKey(key)).toHaveLength(44);
  });

  it("shows the prefix and four characters as the start", () => {
    expect(keyStart("sk_live_AbCdEfG", "sk_live")).toBe("sk_live_AbCd");
    expect(keyStart("AbCdEfG", undefined)).toBe("AbCd");
  });

  it("makes ids that match the spec's id pattern", () => {
    for (const prefix of ["api", "key", "req", "ws"] as const) {
      expect(newId(prefix)).toMatch(new RegExp(`^${prefix}_[a-zA-Z0-9]{16}$`));
    }
    expect(new Set(Array.from({ length: 1000 }, () => newId("req"))).size).toBe(1000);
  });
});

describe("Authorization header", () => {
  it.each([
    [undefined, { kind: "missing" }],
    ["", { kind: "missing" }],
    ["   ", { kind: "missing" }],
    ["Bearer abc", { kind: "token", token: "abc" }],
    ["  Bearer   abc   ", { kind: "token", token: "abc" }],
    ["bearer abc", { kind: "malformed" }],
    ["Basic abc", { kind: "malformed" }],
    ["Bearer", { kind: "malformed" }],
    ["Bearer    ", { kind: "malformed" }],
    ["abc", { kind: "malformed" }],
  ])("reads %j", (header, expected) => {
    expect(parseBearer(header)).toEqual(expected);
  });
});
