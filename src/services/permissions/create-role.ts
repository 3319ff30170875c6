import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CreateRoleRequest,
  CreateRoleResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { distinct } from "../../domain/distinct.js";
import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import type { Queryable } from "../../storage/db.js";
import type { PermissionRow } from "../../storage/queries/permissions.js";
import { roleAddPermissions, roleInsert } from "../../storage/queries/roles.js";
import { authorize, beforeCreating } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { type Change, mutate } from "../mutation.js";
import { ensurePermissions, missingSlugs } from "./slugs.js";

/**
 * Creates a role with permissions given by slug; missing permissions are created.
 * Attaching permissions and creating them need permissions of their own; the one to create is
 * checked again where it would be created (403, rolled back).
 */
export async function createRole(
  deps: Deps,
  req: CreateRoleRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof CreateRoleResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const slugs = distinct(req.permissions);
  const cases: string[] = [];
  if (slugs.length > 0) cases.push("attachPermissions");
  if ((await missingSlugs(deps.db, workspaceId, slugs)).length > 0) cases.push("createPermissions");
  authorize(ctx, {}, cases);
  // A permission that existed at that check may be deleted before the transaction creates it.
  const mayCreate = beforeCreating(ctx, {}, "createPermissions");
  const id = newId("role");
  await mutate(
    deps,
    ctx,
    async (tx, change) => {
      await roleInsert(tx, {
        id,
        workspaceId,
        name: req.name,
        description: req.description ?? null,
        createdAt: change.now,
      });
      change.audit({
        event: "role.create",
        resourceType: "role",
        resourceId: id,
        description: `Created role ${req.name}.`,
      });
      const permissions = await ensurePermissions(tx, change, workspaceId, slugs, mayCreate);
      await attach(tx, change, { id, workspaceId, name: req.name }, permissions);
    },
    {
      roles_name: () => errors.roleAlreadyExists(req.name),
    },
  );
  return { data: { roleId: id } };
}

/** Links a new role to its permissions, with an audit record per link. */
async function attach(
  tx: Queryable,
  change: Change,
  role: { id: string; workspaceId: string; name: string },
  permissions: readonly PermissionRow[],
): Promise<void> {
  await roleAddPermissions(
    tx,
    role.workspaceId,
    role.id,
    permissions.map((p) => p.id),
    change.now,
  );
  for (const p of permissions) {
    change.audit({
      event: "authorization.connect_role_and_permission",
      resourceType: "role",
      resourceId: role.id,
      description: `Connected role ${role.name} and permission ${p.slug}.`,
    });
  }
}
