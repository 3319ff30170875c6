import { describe, expect, it } from "vitest";
import { DbUnavailableError, isUnavailable } from "../../../src/storage/db.js";

const withCode = (code: string) => Object.assign(new Error(code), { code });

describe("which driver errors mean the database is unreachable (503, not 500)", () => {
  it.each([
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENOTFOUND",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "EMFILE",
    "ENFILE",
    "CONNECT_TIMEOUT",
    "CONNECTION_CLOSED",
    "57P01",
    "08006",
  ])("%s is", (code) => {
    expect(isUnavailable(withCode(code))).toBe(true);
  });

  it.each(["23505", "42P01", "22P02", "40001"])("SQLSTATE %s is not", (code) => {
    expect(isUnavailable(withCode(code))).toBe(false);
  });

  it("a DbUnavailableError is, and errors without a code are not", () => {
    expect(isUnavailable(new DbUnavailableError(new Error("down")))).toBe(true);
    expect(isUnavailable(new Error("no code"))).toBe(false);
    expect(isUnavailable(null)).toBe(false);
  });
});
