import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CreateRoleRequest,
  CreateRoleResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import { isUniqueViolation, type Queryable } from "../../storage/db.js";
import { roleAddPermissions, roleInsert } from "../../storage/queries/roles.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { type Change, mutate } from "../mutation.js";
import { distinctSlugs, ensurePermissions, missingSlugs } from "./slugs.js";

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
  const slugs = distinctSlugs(req.permissions);
  const cases: string[] = [];
  if (slugs.length > 0) cases.push("attachPermissions");
  if ((await missingSlugs(deps.db, workspaceId, slugs)).length > 0) cases.push("createPermissions");
  authorize(ctx, {}, cases);
  const id = newId("role");
  try {
    await mutate(deps, ctx, async (tx, change) => {
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
      await connectPermissions(tx, change, ctx, { id, workspaceId, name: req.name }, slugs);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw errors.roleAlreadyExists(req.name);
    throw err;
  }
  return { data: { roleId: id } };
}

/**
 * Connects a new role to the permissions with these slugs (audited), creating missing ones:
 * a permission deleted since the caller's check would be created, so creating needs the grant
 * here too (the 403 rolls the role back).
 */
async function connectPermissions(
  tx: Queryable,
  change: Change,
  ctx: HandlerContext,
  role: { id: string; workspaceId: string; name: string },
  slugs: readonly string[],
): Promise<void> {
  const permissions = await ensurePermissions(tx, change, role.workspaceId, slugs, () =>
    authorize(ctx, {}, ["createPermissions"]),
  );
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
