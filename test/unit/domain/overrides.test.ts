import { describe, expect, it } from "vitest";
import { matchOverride, wildcardMatches } from "../../../src/domain/overrides.js";

describe("wildcard identifiers", () => {
  it.each([
    ["user_*", "user_123", true],
    ["user_*", "user_", true],
    ["user_*", "admin_1", false],
    ["*", "anything", true],
    ["*", "", true],
    ["*_eu", "tenant_eu", true],
    ["*_eu", "tenant_us", false],
    ["a*b*c", "a123b456c", true],
    ["a*b*c", "abc", true],
    ["a*b*c", "acb", false],
    ["a*a", "a", false],
    ["a*a", "aa", true],
    ["exact", "exact", true],
    ["exact", "exactly", false],
    ["user.*", "user.x", true],
    ["user.*", "userx", false],
  ])("%s matches %s: %s", (pattern, identifier, matches) => {
    expect(wildcardMatches(pattern, identifier)).toBe(matches);
  });
});

describe("override matching", () => {
  const o = (id: string, identifier: string, createdAt: number) => ({
    id,
    identifier,
    limit: 1,
    durationMs: 1000,
    createdAt,
  });
  const overrides = [
    o("rlor_any", "*", 1),
    o("rlor_user", "user_*", 2),
    o("rlor_user_eu", "user_*_eu", 3),
    o("rlor_exact", "user_42_eu", 4),
    o("rlor_old", "team_*", 5),
    o("rlor_new", "*_team", 6),
  ];
  it.each([
    ["user_42_eu", "rlor_exact"],
    ["user_7_eu", "rlor_user_eu"],
    ["user_7_us", "rlor_user"],
    ["other", "rlor_any"],
    ["team_x_team", "rlor_old"],
  ])("%s gets %s", (identifier, id) => {
    expect(matchOverride(overrides, identifier)?.id).toBe(id);
  });

  it("finds nothing without a match", () => {
    expect(matchOverride([o("a", "user_*", 1)], "admin")).toBeUndefined();
  });
});
