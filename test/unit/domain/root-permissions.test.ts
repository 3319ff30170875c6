import { describe, expect, it } from "vitest";
import {
  rootPermissionCovers,
  rootPermissionsAllow,
} from "../../../src/domain/root-permissions.js";

describe("root-key permission matching", () => {
  it.each([
    // granted, required, covers
    ["api.*.create_key", "api.api_123.create_key", true],
    ["api.api_123.create_key", "api.api_123.create_key", true],
    ["api.api_123.create_key", "api.api_456.create_key", false],
    ["api.*.create_key", "api.*.create_key", true],
    ["api.api_123.create_key", "api.*.create_api", false],
    ["api.*.*", "api.api_123.read_key", true],
    ["*.*.*", "rbac.*.create_role", true],
    ["*.*.*", "identity.id_1.read_identity", true],
    ["*", "api.api_1.read_api", false],
    ["api.*", "api.api_1.read_api", false],
    ["api.*.read_api", "api.api_1.read_key", false],
    ["API.*.READ_API", "api.api_1.read_api", false],
    ["api.*.read_api", "api.api_1.read_api.extra", false],
    ["ratelimit.*.limit", "ratelimit.rlns_1.limit", true],
    ["ratelimit.rlns_1.limit", "ratelimit.rlns_2.limit", false],
  ])("%s covers %s: %s", (granted, required, covers) => {
    expect(rootPermissionCovers(granted, required)).toBe(covers);
  });

  it("allows when any grant covers the requirement", () => {
    expect(rootPermissionsAllow(["api.*.read_api", "api.a.create_key"], "api.a.create_key")).toBe(
      true,
    );
    expect(rootPermissionsAllow(["api.*.read_api"], "api.a.create_key")).toBe(false);
    expect(rootPermissionsAllow([], "api.a.create_key")).toBe(false);
  });
});
