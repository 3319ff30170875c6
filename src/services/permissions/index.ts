import type { ServiceImpl } from "@connectrpc/connect";
import type { PermissionsService } from "../../../gen/latchkey/v2/permissions_pb.js";
import type { Deps } from "../deps.js";
import { createPermission } from "./create-permission.js";
import { createRole } from "./create-role.js";
import { deletePermission } from "./delete-permission.js";
import { deleteRole } from "./delete-role.js";
import { getPermission } from "./get-permission.js";
import { getRole } from "./get-role.js";
import { listPermissions } from "./list-permissions.js";
import { listRoles } from "./list-roles.js";
import { setRolePermissions } from "./set-role-permissions.js";

/** The PermissionsService implementation. */
export function permissionsService(deps: Deps): ServiceImpl<typeof PermissionsService> {
  return {
    createPermission: (req, ctx) => createPermission(deps, req, ctx),
    getPermission: (req, ctx) => getPermission(deps, req, ctx),
    listPermissions: (req, ctx) => listPermissions(deps, req, ctx),
    deletePermission: (req, ctx) => deletePermission(deps, req, ctx),
    createRole: (req, ctx) => createRole(deps, req, ctx),
    getRole: (req, ctx) => getRole(deps, req, ctx),
    listRoles: (req, ctx) => listRoles(deps, req, ctx),
    deleteRole: (req, ctx) => deleteRole(deps, req, ctx),
    setRolePermissions: (req, ctx) => setRolePermissions(deps, req, ctx),
  };
}
