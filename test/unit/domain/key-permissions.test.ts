import { describe, expect, it } from "vitest";
import { keyPermissionCovers, keyPermissionsAllow } from "../../../src/domain/key-permissions.js";

describe("key permission matching", () => {
  it.each([
    // held, wanted, covers
    ["documents.read", "documents.read", true],
    ["documents.read", "documents.write", false],
    ["documents.*", "documents.read", true],
    ["documents.*", "documents.a.b", true],
    ["documents.*", "documents", false],
    ["documents.*", "documentsx.read", false],
    ["documents.*", "other.read", false],
    ["*", "admin", true],
    ["*", "documents.read", false],
    ["a.*.c", "a.b.c", true],
    ["a.*.c", "a.b.x.c", false],
    ["a.*.c", "a.b.d", false],
    ["a.*.*", "a.b.c", true],
    ["a.*.*", "a.b.c.d", true],
    ["a.*.*", "a.b", false],
    ["Documents.*", "documents.read", false],
    ["documents.read", "Documents.read", false],
    ["billing:invoices.*", "billing:invoices.read", true],
    ["billing:invoices.*", "billing.invoices.read", false],
    ["api:v1.read", "api:v1.read", true],
    ["doc*", "documents", false],
    ["doc*", "doc*", true],
    ["api.*", "api.*", true],
  ])("%s covers %s: %s", (held, wanted, covers) => {
    expect(keyPermissionCovers(held, wanted)).toBe(covers);
  });

  it("allows when any held permission covers the wanted one", () => {
    expect(keyPermissionsAllow(["x.read", "documents.*"], "documents.write")).toBe(true);
    expect(keyPermissionsAllow(["x.read"], "documents.write")).toBe(false);
    expect(keyPermissionsAllow([], "documents.write")).toBe(false);
  });
});
