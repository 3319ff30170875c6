import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  rootPermissionCovers,
  rootPermissionsAllow,
  rootPermittedIds,
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

describe("the ids a root key may act on", () => {
  it.each([
    [["identity.*.read_identity"], "all"],
    [["identity.*.*"], "all"],
    [["*.*.*"], "all"],
    [["*.*.read_identity"], "all"],
    [
      ["identity.id_1.read_identity", "identity.id_2.*", "*.id_3.read_identity"],
      ["id_1", "id_2", "id_3"],
    ],
    [["identity.id_1.read_identity", "identity.id_1.*"], ["id_1"]],
    [["identity.id_1.read_identity", "identity.*.read_identity"], "all"],
    [["identity.id_1.update_identity", "api.*.read_api", "rbac.*.read_role"], []],
    [["identity.id_1", "identity.id_1.read_identity.x", "identity", "*"], []],
    [[], []],
  ] as const)("%o: %o", (granted, ids) => {
    expect(rootPermittedIds(granted, "identity", "read_identity")).toEqual(ids);
  });

  it("reads the resource and action asked for: API ids for read_analytics", () => {
    const apis = (granted: string[]) => rootPermittedIds(granted, "api", "read_analytics");
    expect(apis(["api.*.read_analytics"])).toBe("all");
    expect(apis(["api.api_1.read_analytics", "api.api_2.*"])).toEqual(["api_1", "api_2"]);
    expect(apis(["api.api_1.read_key", "ratelimit.*.read_analytics"])).toEqual([]);
  });

  it("names exactly the ids whose permission the grants allow", () => {
    const segment = (values: string[]) => fc.constantFrom(...values);
    const grant = fc.oneof(
      fc
        .tuple(
          segment(["identity", "api", "*"]),
          segment(["id_1", "id_2", "*"]),
          segment(["read_identity", "update_identity", "*"]),
        )
        .map((parts) => parts.join(".")),
      segment(["identity.id_1", "identity.id_1.read_identity.x", "*", "identity..read_identity"]),
    );
    fc.assert(
      fc.property(fc.array(grant, { maxLength: 5 }), (granted) => {
        const ids = rootPermittedIds(granted, "identity", "read_identity");
        for (const id of ["id_1", "id_2", "id_3", "anything"]) {
          const allowed = rootPermissionsAllow(granted, `identity.${id}.read_identity`);
          expect(ids === "all" || ids.includes(id)).toBe(allowed);
        }
      }),
    );
  });
});
