import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  AddPermissionsRequest,
  AddPermissionsResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { distinct } from "../../domain/distinct.js";
import type { Deps } from "../deps.js";
import { ensurePermissions } from "../permissions/slugs.js";
import { changeKeyPermissions } from "./grants.js";
import { changeKeyPermissionsOf, type KeyPermissionChange } from "./key-permission-changes.js";

/** Adds the permissions (created first when missing) to the key's direct ones. */
const add: KeyPermissionChange = {
  creates: true,
  apply: async (tx, change, ref, slugs, creating) =>
    changeKeyPermissions(
      tx,
      change,
      ref,
      await ensurePermissions(tx, change, ref.workspaceId, slugs, creating),
      [],
    ),
};

/** Grants permissions to a key directly; missing permissions are created. */
export function addPermissions(
  deps: Deps,
  req: AddPermissionsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof AddPermissionsResponseSchema>> {
  return changeKeyPermissionsOf(deps, ctx, req.keyId, distinct(req.permissions), add);
}
