import { CODES, invalid, ok, type Row, refused } from "../row.js";

export const PERMISSION_ROWS: Row[] = [
  ok("permissions.createPermission", "a permission with a description", async () => ({
    body: { name: "docs.reader", slug: "docs.read", description: "Reads any document." },
  })),
  refused(
    "permissions.createPermission",
    "a taken slug",
    409,
    CODES.permissionExists,
    async (g) => {
      await g.permission("docs.read");
      return { body: { name: "again", slug: "docs.read" } };
    },
  ),
  invalid("permissions.createPermission", "a slug with a space", ["/slug"], async () => ({
    body: { name: "spaced", slug: "docs read" },
  })),

  ok("permissions.getPermission", "by slug", async (g) => {
    await g.permission("docs.read");
    return { body: { permission: "docs.read" } };
  }),
  refused(
    "permissions.getPermission",
    "an unknown permission",
    404,
    CODES.permissionNotFound,
    async () => ({
      body: { permission: "docs.none" },
    }),
  ),

  ok("permissions.listPermissions", "a page of two of three, searched", async (g) => {
    for (const slug of ["docs.read", "docs.write", "other.read", "docs.delete"])
      await g.permission(slug);
    return { body: { limit: 2, search: "docs" } };
  }),
  refused(
    "permissions.listPermissions",
    "a key that may not read permissions",
    403,
    CODES.forbidden,
    async (g) => ({
      body: {},
      auth: await g.rootKeyWith(["rbac.*.read_role"]),
    }),
  ),

  ok("permissions.deletePermission", "deletes a permission by id", async (g) => ({
    body: { permission: await g.permission("docs.read") },
  })),
  refused(
    "permissions.deletePermission",
    "an unknown permission",
    404,
    CODES.permissionNotFound,
    async () => ({
      body: { permission: "docs.none" },
    }),
  ),
];

export const ROLE_ROWS: Row[] = [
  ok("permissions.createRole", "a role with an existing and a new permission", async (g) => {
    await g.permission("docs.read");
    return {
      body: { name: "editor", description: "Edits.", permissions: ["docs.read", "docs.write"] },
    };
  }),
  refused("permissions.createRole", "a taken name", 409, CODES.roleExists, async (g) => {
    await g.role("editor");
    return { body: { name: "editor" } };
  }),
  refused(
    "permissions.createRole",
    "permissions without the grant to attach them",
    403,
    CODES.forbidden,
    async (g) => ({
      body: { name: "editor", permissions: ["docs.read"] },
      auth: await g.rootKeyWith(["rbac.*.create_role", "rbac.*.create_permission"]),
    }),
  ),

  ok("permissions.getRole", "by name, with its permissions", async (g) => {
    await g.role("editor", ["docs.write", "docs.read"]);
    return { body: { role: "editor" } };
  }),
  refused("permissions.getRole", "an unknown role", 404, CODES.roleNotFound, async () => ({
    body: { role: "nobody" },
  })),

  ok("permissions.listRoles", "a first page of two of three", async (g) => {
    await g.role("reader", ["docs.read"]);
    await g.role("writer", ["docs.write", "docs.read"]);
    await g.role("admin");
    return { body: { limit: 2 } };
  }),
  invalid("permissions.listRoles", "a search over 256 characters", ["/search"], async () => ({
    body: { search: "x".repeat(257) },
  })),

  ok("permissions.deleteRole", "deletes a role by id", async (g) => ({
    body: { role: await g.role("editor", ["docs.read"]) },
  })),
  refused("permissions.deleteRole", "an unknown role", 404, CODES.roleNotFound, async () => ({
    body: { role: "nobody" },
  })),

  ok("permissions.setRolePermissions", "replaces a role's permissions", async (g) => {
    const roleId = await g.role("editor", ["docs.read", "docs.write"]);
    return { body: { roleId, permissions: ["docs.write", "docs.delete"] } };
  }),
  refused(
    "permissions.setRolePermissions",
    "an unknown role",
    404,
    CODES.roleNotFound,
    async () => ({
      body: { roleId: "role_unknown", permissions: [] },
    }),
  ),
];
