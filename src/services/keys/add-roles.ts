import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { AddRolesRequest, AddRolesResponseSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { distinct } from "../../domain/distinct.js";
import type { Deps } from "../deps.js";
import { changeKeyRoles } from "./grants.js";
import { changeKeyRolesOf } from "./key-role-changes.js";

/** Grants roles to a key; each role must exist (404 role_not_found, nothing changes). */
export function addRoles(
  deps: Deps,
  req: AddRolesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof AddRolesResponseSchema>> {
  return changeKeyRolesOf(deps, ctx, req.keyId, distinct(req.roles), (tx, change, ref, roles) =>
    changeKeyRoles(tx, change, ref, roles, []),
  );
}
