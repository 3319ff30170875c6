import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  RemovePermissionsRequest,
  RemovePermissionsResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { distinct } from "../../domain/distinct.js";
import { errors } from "../../errors/service-error.js";
import { permissionsBySlugs } from "../../storage/queries/permissions.js";
import type { Deps } from "../deps.js";
import { changeKeyPermissions } from "./grants.js";
import { changeKeyPermissionsOf, type KeyPermissionChange } from "./key-permission-changes.js";

/** Takes the permissions from the key's direct ones; an unknown slug changes nothing (404). */
const remove: KeyPermissionChange = {
  creates: false,
  apply: async (tx, change, ref, slugs) => {
    const existing = await permissionsBySlugs(tx, ref.workspaceId, slugs);
    const known = new Set(existing.map((p) => p.slug));
    const unknown = slugs.find((s) => !known.has(s));
    if (unknown !== undefined) throw errors.permissionNotFound(unknown);
    return changeKeyPermissions(tx, change, ref, [], existing);
  },
};

/** Takes direct permissions from a key; each slug must exist (404 permission_not_found). */
export function removePermissions(
  deps: Deps,
  req: RemovePermissionsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof RemovePermissionsResponseSchema>> {
  return changeKeyPermissionsOf(deps, ctx, req.keyId, distinct(req.permissions), remove);
}
