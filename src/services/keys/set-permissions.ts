import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  SetPermissionsRequest,
  SetPermissionsResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { distinct } from "../../domain/distinct.js";
import type { Deps } from "../deps.js";
import { setKeyPermissions } from "./grants.js";
import { changeKeyPermissionsOf, type KeyPermissionChange } from "./key-permission-changes.js";

/** Makes the permissions (created first when missing) the key's only direct ones. */
const set: KeyPermissionChange = {
  creates: true,
  apply: (tx, change, ref, slugs, creating) => setKeyPermissions(tx, change, ref, slugs, creating),
};

/** Replaces the direct permissions of a key; missing permissions are created. */
export function setPermissions(
  deps: Deps,
  req: SetPermissionsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof SetPermissionsResponseSchema>> {
  return changeKeyPermissionsOf(deps, ctx, req.keyId, distinct(req.permissions), set);
}
