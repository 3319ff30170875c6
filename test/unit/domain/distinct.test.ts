import { describe, expect, it } from "vitest";
import { distinct } from "../../../src/domain/distinct.js";

describe("distinct values of a request list", () => {
  it("keeps each value once, in the order it was first seen", () => {
    expect(distinct(["b", "a", "b", "c", "a"])).toEqual(["b", "a", "c"]);
  });

  it("is case-sensitive: slugs that differ only in case are different values", () => {
    expect(distinct(["Read", "read", "READ", "read"])).toEqual(["Read", "read", "READ"]);
  });

  it("answers an empty list with an empty list and does not change its input", () => {
    const input = ["x", "x"];
    expect(distinct([])).toEqual([]);
    expect(distinct(input)).toEqual(["x"]);
    expect(input).toEqual(["x", "x"]);
  });
});
