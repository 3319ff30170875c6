import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CreatePermissionRequest,
  CreatePermissionResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { newId } from "../../domain/ids.js";
import { errors } from "../../errors/service-error.js";
import { permissionInsert } from "../../storage/queries/permissions.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";

/** Creates a permission; its slug must be new in the workspace (case-sensitive), else 409. */
export async function createPermission(
  deps: Deps,
  req: CreatePermissionRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof CreatePermissionResponseSchema>> {
  authorize(ctx);
  const { workspaceId } = principalOf(ctx);
  const id = newId("perm");
  await mutate(
    deps,
    ctx,
    async (tx, change) => {
      await permissionInsert(tx, {
        id,
        workspaceId,
        name: req.name,
        slug: req.slug,
        description: req.description ?? null,
        createdAt: change.now,
      });
      change.audit({
        event: "permission.create",
        resourceType: "permission",
        resourceId: id,
        description: `Created permission ${req.slug}.`,
      });
    },
    {
      permissions_slug: () => errors.permissionAlreadyExists(req.slug),
    },
  );
  return { data: { permissionId: id } };
}
