import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { SetRolesRequest, SetRolesResponseSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { distinct } from "../../domain/distinct.js";
import type { Deps } from "../deps.js";
import { setKeyRoles } from "./grants.js";
import { changeKeyRolesOf } from "./key-role-changes.js";

/** Replaces the roles of a key; [] removes all. */
export function setRoles(
  deps: Deps,
  req: SetRolesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof SetRolesResponseSchema>> {
  return changeKeyRolesOf(deps, ctx, req.keyId, distinct(req.roles), setKeyRoles);
}
