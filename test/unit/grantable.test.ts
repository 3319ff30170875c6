import { create } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CreatePermissionRequestSchema,
  CreateRoleRequestSchema,
} from "../../gen/latchkey/v2/permissions_pb.js";
import type { Violation } from "../../src/errors/service-error.js";
import { validateMessage } from "../../src/server/validation.js";

// What a key can be granted (the bounds of a key's role and permission fields). Roles: 1-100 characters; permissions: 3-100; both
// of the pattern below. Whatever createRole and createPermission accept must fit.
const KEY_FIELD = /^[a-zA-Z0-9_:\-.*]+$/;
const grantableRole = (s: string) => s.length >= 1 && s.length <= 100 && KEY_FIELD.test(s);
const grantablePermission = (s: string) => s.length >= 3 && s.length <= 100 && KEY_FIELD.test(s);

const candidate = fc.string({
  unit: fc.constantFrom(..."aZ09_:-.*", " ", "/", ",", "é", "😀", "$"),
  minLength: 0,
  maxLength: 110,
});

function accepted(
  schema: typeof CreatePermissionRequestSchema | typeof CreateRoleRequestSchema,
  init: object,
): boolean {
  const out: Violation[] = [];
  validateMessage(schema, create(schema, init as never) as never, "", out);
  return out.length === 0;
}

describe("whatever can be created can be granted to a key", () => {
  it("holds for permission slugs and names", () => {
    fc.assert(
      fc.property(candidate, (s) => {
        if (accepted(CreatePermissionRequestSchema, { name: "valid", slug: s }))
          expect(grantablePermission(s)).toBe(true);
        if (accepted(CreatePermissionRequestSchema, { name: s, slug: "valid" }))
          expect(grantablePermission(s)).toBe(true);
      }),
      { seed: 20261122, numRuns: 5000 },
    );
  });

  it("holds for role names and the permissions a role is created with", () => {
    fc.assert(
      fc.property(candidate, (s) => {
        if (accepted(CreateRoleRequestSchema, { name: s })) expect(grantableRole(s)).toBe(true);
        if (accepted(CreateRoleRequestSchema, { name: "valid", permissions: [s] })) {
          expect(grantablePermission(s)).toBe(true);
        }
      }),
      { seed: 20261122, numRuns: 5000 },
    );
  });

  it("accepts the edges of the bounds", () => {
    expect(accepted(CreateRoleRequestSchema, { name: "r" })).toBe(true);
    expect(accepted(CreateRoleRequestSchema, { name: "r".repeat(100) })).toBe(true);
    expect(accepted(CreatePermissionRequestSchema, { name: "abc", slug: "a:b" })).toBe(true);
    expect(accepted(CreatePermissionRequestSchema, { name: "abc", slug: "p".repeat(100) })).toBe(
      true,
    );
    expect(accepted(CreatePermissionRequestSchema, { name: "abc", slug: "documents.*" })).toBe(
      true,
    );
  });
});
