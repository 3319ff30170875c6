import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  GetPermissionRequest,
  GetPermissionResponseSchema,
} from "../../../gen/latchkey/v2/permissions_pb.js";
import { errors } from "../../errors/service-error.js";
import { permissionFind } from "../../storage/queries/permissions.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { toPermissionMessage } from "./view.js";

/** Returns a permission named by id or slug. */
export async function getPermission(
  deps: Deps,
  req: GetPermissionRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetPermissionResponseSchema>> {
  const permission = await permissionFind(deps.db, principalOf(ctx).workspaceId, req.permission);
  if (!permission) throw errors.permissionNotFound();
  authorize(ctx);
  return { data: toPermissionMessage(permission) };
}
