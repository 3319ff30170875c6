import { describe, expect, it } from "vitest";
import {
  checkItems,
  checkNumber,
  checkStorable,
  checkString,
  codePointLength,
  escapePointer,
  findTooDeep,
  findUnsafeNumber,
  findUnstorableString,
} from "../../../src/domain/field-rules.js";

describe("field rules", () => {
  it("counts code points, not UTF-16 units", () => {
    expect(codePointLength("abc")).toBe(3);
    expect(codePointLength("😀😀")).toBe(2);
    expect(codePointLength("é")).toBe(1);
    expect(codePointLength("\ud800")).toBe(1);
  });

  it("checks string length and pattern", () => {
    const b = { minLen: 3, maxLen: 5, pattern: /^[a-z]+$/u };
    expect(checkString("abc", b)).toBeUndefined();
    expect(checkString("ab", b)).toMatch(/at least 3/);
    expect(checkString("abcdef", b)).toMatch(/at most 5/);
    expect(checkString("ABC", b)).toMatch(/pattern/);
    expect(checkString("😀😀😀", { maxLen: 3 })).toBeUndefined();
  });

  it("checks numbers, integers and bounds", () => {
    expect(checkNumber(5, { min: 1, max: 10 }, true)).toBeUndefined();
    expect(checkNumber(0, { min: 1 }, true)).toMatch(/at least 1/);
    expect(checkNumber(11, { max: 10 }, true)).toMatch(/at most 10/);
    expect(checkNumber(1.5, {}, true)).toMatch(/integer/);
    expect(checkNumber(2 ** 53, {}, true)).toMatch(/2\^53/);
    expect(checkNumber(Number.NaN, {}, false)).toMatch(/finite/);
  });

  it("checks list sizes", () => {
    expect(checkItems(0, 1)).toMatch(/at least 1 item/);
    expect(checkItems(51, undefined, 50)).toMatch(/at most 50/);
    expect(checkItems(3, 1, 5)).toBeUndefined();
  });

  it("finds numbers that JSON cannot carry exactly, with their pointer", () => {
    expect(findUnsafeNumber({ a: [1, { "b/c": 2 ** 53 }] }, "/meta")).toBe("/meta/a/1/b~1c");
    expect(findUnsafeNumber({ a: 2 ** 53 - 1, b: 1.5 }, "")).toBeUndefined();
    expect(escapePointer("a~b/c")).toBe("a~0b~1c");
  });

  it("says first what PostgreSQL cannot store, then the length, then the pattern", () => {
    const b = { minLen: 3, maxLen: 4, pattern: /^[a-z]+$/u };
    expect(checkString("a\u0000\ud800", b)).toBe("must not contain the character U+0000");
    expect(checkString("ab\ud800", b)).toBe("must be well-formed Unicode (no unpaired surrogate)");
    expect(checkString("a\udc00", {})).toMatch(/unpaired/);
    expect(checkString("\ud800\ud800\udc00", {})).toMatch(/unpaired/);
    expect(checkString("\udc00\ud800", {})).toMatch(/unpaired/);
    expect(checkString("😀", b)).toBe("must be at least 3 characters long (got 1)");
    expect(checkString("😀😀😀😀😀", b)).toBe("must be at most 4 characters long (got 5)");
    expect(checkString("😀😀😀", b)).toMatch(/pattern/);
    expect(checkStorable("😀é")).toBeUndefined();
    expect(checkStorable("x\udbff")).toMatch(/unpaired/);
  });

  it("points at the first value too deep, unsafe or unstorable, in document order", () => {
    const meta = { a: [1, "ok", { "b/c": [[["deep"]]] }], z: [2 ** 53, "\u0000"] };
    expect(findTooDeep(meta, "/meta", 4)).toBe("/meta/a/2/b~1c/0");
    expect(findTooDeep(meta, "/meta", 6)).toBeUndefined();
    expect(findUnsafeNumber(meta, "/meta")).toBe("/meta/z/0");
    expect(findUnstorableString(meta, "/meta")).toEqual({
      location: "/meta/z/1",
      message: "must not contain the character U+0000",
    });
    expect(findUnstorableString({ ok: 1, "k~\ud800": { "\u0000": 1 } }, "")).toEqual({
      location: "/k~0\ud800",
      message: "has a key that must be well-formed Unicode (no unpaired surrogate)",
    });
    expect(findUnstorableString({ a: { "\u0000": "\ud800" } }, "/m")?.location).toBe("/m/a/\u0000");
  });
});
