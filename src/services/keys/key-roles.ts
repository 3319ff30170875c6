import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  AddRolesRequest,
  AddRolesResponseSchema,
  RemoveRolesRequest,
  RemoveRolesResponseSchema,
  SetRolesRequest,
  SetRolesResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { permissionsByRole } from "../permissions/find-role.js";
import { toRoleMessage } from "../permissions/view.js";
import { distinct, findKey } from "./find-key.js";
import { changeKeyRoles, resolveRoles, setKeyRoles } from "./grants.js";

/** The shared steps: find the key (404), authorize (403), resolve roles (404), change. */
async function changeRoles(
  deps: Deps,
  ctx: HandlerContext,
  keyId: string,
  names: string[],
  kind: "add" | "remove" | "set",
) {
  const { workspaceId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, keyId);
  authorize(ctx, { apiId: found.apiId });
  const final = await mutate(deps, ctx, async (tx, change) => {
    const key = await findKey(tx, workspaceId, keyId, true);
    const roles = await resolveRoles(tx, workspaceId, names);
    const ref = { workspaceId, keyId: key.id };
    const result =
      kind === "set"
        ? await setKeyRoles(tx, change, ref, roles)
        : kind === "add"
          ? await changeKeyRoles(tx, change, ref, roles, [])
          : await changeKeyRoles(tx, change, ref, [], roles);
    change.invalidate({ kind: "key", workspaceId, apiId: key.apiId, id: key.id, hash: key.hash });
    const permissions = await permissionsByRole(
      tx,
      result.map((r) => r.id),
    );
    return result.map((r) => toRoleMessage(r, permissions.get(r.id) ?? []));
  });
  return { data: final };
}

/** Grants roles to a key; each role must exist (404 role_not_found, nothing changes). */
export function addRoles(
  deps: Deps,
  req: AddRolesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof AddRolesResponseSchema>> {
  return changeRoles(deps, ctx, req.keyId, distinct(req.roles), "add");
}

/** Takes roles from a key; each role must exist. */
export function removeRoles(
  deps: Deps,
  req: RemoveRolesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof RemoveRolesResponseSchema>> {
  return changeRoles(deps, ctx, req.keyId, distinct(req.roles), "remove");
}

/** Replaces the roles of a key; [] removes all. */
export function setRoles(
  deps: Deps,
  req: SetRolesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof SetRolesResponseSchema>> {
  return changeRoles(deps, ctx, req.keyId, distinct(req.roles), "set");
}
