import * as zlib from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base58Fixed, base58Width } from "../../../src/domain/base58.js";
import { crc32 } from "../../../src/domain/crc32.js";
import {
  CHECKSUM_LENGTH,
  checksummedBodyLength,
  checksumOf,
  looksLikeLatchkeyKey,
  scannerPattern,
} from "../../../src/domain/key-format.js";
import { generateKey } from "../../../src/domain/key-material.js";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const prefixes = fc.option(fc.stringMatching(/^[a-zA-Z0-9_]{1,16}$/), { nil: undefined });
const byteLengths = fc.integer({ min: 16, max: 255 });

describe("CRC-32", () => {
  it.each([
    ["", 0],
    ["a", 0xe8b7be43],
    ["123456789", 0xcbf43926],
    ["The quick brown fox jumps over the lazy dog", 0x414fa339],
  ])("of %j is the IEEE CRC-32", (text, expected) => {
    expect(crc32(new TextEncoder().encode(text))).toBe(expected);
  });

  it("agrees with node:zlib's crc32 (Node 22.2+) on any bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(crc32(bytes)).toBe(zlib.crc32(bytes));
      }),
    );
  });
});

describe("fixed-width Base58", () => {
  it.each([
    [4, 6],
    [16, 22],
    [32, 44],
    [255, 349],
  ])("holds %i bytes in %i digits", (bytes, width) => {
    expect(base58Width(bytes)).toBe(width);
    expect(base58Fixed(new Uint8Array(bytes).fill(0xff))).toHaveLength(width);
    expect(base58Fixed(new Uint8Array(bytes))).toBe("1".repeat(width));
  });

  it("writes the checksum as six digits, zero-padded with '1'", () => {
    expect(checksumOf("")).toBe("111111");
    expect(checksumOf("123456789")).toHaveLength(CHECKSUM_LENGTH);
  });
});

describe("checksummed keys", () => {
  it("end with the CRC-32 of everything before it, at a length fixed by prefix and bytes", () => {
    const key = generateKey("sk_live", 16, "checksummed");
    expect(key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]{28}$/);
    expect(key.slice(-6)).toBe(checksumOf(key.slice(0, -6)));
    expect(generateKey(undefined, 32, "checksummed")).toHaveLength(50);
  });

  it("keep the plain format unchanged", () => {
    const key = generateKey("sk", 16);
    expect(key).toMatch(/^sk_[1-9A-HJ-NP-Za-km-z]{20,22}$/);
    expect(generateKey("sk", 16, "plain")).toMatch(/^sk_[1-9A-HJ-NP-Za-km-z]{20,22}$/);
  });

  it("are recognised, and matched by the published pattern, for any prefix and length", () => {
    fc.assert(
      fc.property(prefixes, byteLengths, (prefix, byteLength) => {
        const key = generateKey(prefix, byteLength, "checksummed");
        expect(key).toHaveLength(
          (prefix ? prefix.length + 1 : 0) + checksummedBodyLength(byteLength),
        );
        expect(looksLikeLatchkeyKey(key)).toBe(true);
        const pattern = new RegExp(scannerPattern(prefix, byteLength), "g");
        expect(` x ${key}. `.match(pattern)).toEqual([key]);
      }),
    );
  });

  it("are refused after any one character of them changes", () => {
    fc.assert(
      fc.property(
        prefixes,
        byteLengths,
        fc.nat(),
        fc.integer({ min: 1, max: 57 }),
        (prefix, byteLength, at, shift) => {
          const key = generateKey(prefix, byteLength, "checksummed");
          const body = key.length - checksummedBodyLength(byteLength);
          const i = body + (at % checksummedBodyLength(byteLength));
          const next = BASE58[(BASE58.indexOf(key[i] as string) + shift) % 58] as string;
          const changed = key.slice(0, i) + next + key.slice(i + 1);
          expect(looksLikeLatchkeyKey(changed)).toBe(false);
        },
      ),
    );
  });

  it("refuse a change in the prefix, which the checksum covers", () => {
    const key = generateKey("live", 16, "checksummed");
    expect(looksLikeLatchkeyKey(`test${key.slice(4)}`)).toBe(false);
  });

  it("are not mistaken for random Base58 text of the right length", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{28}$/), (text) => {
        // A random text passes with odds of 2^-32 per case.
        expect(looksLikeLatchkeyKey(`sk_${text}`)).toBe(false);
      }),
    );
  });

  it.each([
    ["", "empty"],
    ["_", "only a separator"],
    ["sk_", "no random part"],
    ["_AAAAAAAAAAAAAAAAAAAAAAAAAAAA", "an empty prefix"],
    ["abcdefghijklmnopq_AAAAAAAAAAAAAAAAAAAAAAAAAAAA", "a prefix over 16 characters"],
    ["sk-x_AAAAAAAAAAAAAAAAAAAAAAAAAAAA", "a prefix with '-'"],
    ["sk_0AAAAAAAAAAAAAAAAAAAAAAAAAAA", "a character outside Base58"],
    ["sk_AAAAAAAAAAAAAAAAAAAAAAAAAAA", "a random part one short"],
    [`sk_${"A".repeat(400)}`, "a text longer than any key"],
  ])("refuse %j (%s)", (text) => {
    expect(looksLikeLatchkeyKey(text)).toBe(false);
  });

  it("include the example of the documentation and the API reference", () => {
    expect(looksLikeLatchkeyKey("wx_3ZtKq8fV2mLpR9xBn4cJ7d7Xymh7")).toBe(true);
    expect(checksumOf("wx_3ZtKq8fV2mLpR9xBn4cJ7d")).toBe("7Xymh7");
    expect(looksLikeLatchkeyKey("wx_8HsW2kPz5QnLt3VcX9mRbf3i9ZQC")).toBe(true);
  });

  it("refuse plain-format keys", () => {
    expect(looksLikeLatchkeyKey(generateKey("sk", 16))).toBe(false);
  });

  it("publish the pattern of the default 16 bytes", () => {
    expect(scannerPattern("sk_live")).toBe("\\bsk_live_[1-9A-HJ-NP-Za-km-z]{28}\\b");
    expect(scannerPattern(undefined, 32)).toBe("\\b[1-9A-HJ-NP-Za-km-z]{50}\\b");
  });
});
