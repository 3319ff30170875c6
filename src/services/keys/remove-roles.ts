import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  RemoveRolesRequest,
  RemoveRolesResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { distinct } from "../../domain/distinct.js";
import type { Deps } from "../deps.js";
import { changeKeyRoles } from "./grants.js";
import { changeKeyRolesOf } from "./key-role-changes.js";

/** Takes roles from a key; each role must exist. */
export function removeRoles(
  deps: Deps,
  req: RemoveRolesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof RemoveRolesResponseSchema>> {
  return changeKeyRolesOf(deps, ctx, req.keyId, distinct(req.roles), (tx, change, ref, roles) =>
    changeKeyRoles(tx, change, ref, [], roles),
  );
}
