import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  AddPermissionsRequest,
  AddPermissionsResponseSchema,
  RemovePermissionsRequest,
  RemovePermissionsResponseSchema,
  SetPermissionsRequest,
  SetPermissionsResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { errors } from "../../errors/service-error.js";
import { type PermissionRow, permissionsBySlugs } from "../../storage/queries/permissions.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { ensurePermissions, missingSlugs } from "../permissions/slugs.js";
import { toPermissionMessage } from "../permissions/view.js";
import { distinct, findKey } from "./find-key.js";
import { beforeCreating } from "./grant-cases.js";
import { changeKeyPermissions, setKeyPermissions } from "./grants.js";

type PermissionsChange = "add" | "remove" | "set";

/** The shared steps of the three procedures: find the key (404), authorize (403), change. */
async function changePermissions(
  deps: Deps,
  ctx: HandlerContext,
  keyId: string,
  slugs: string[],
  kind: PermissionsChange,
) {
  const { workspaceId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, keyId);
  const missing = kind === "remove" ? [] : await missingSlugs(deps.db, workspaceId, slugs);
  const vars = { apiId: found.apiId };
  authorize(ctx, vars, missing.length > 0 ? ["createPermissions"] : []);
  const creating = beforeCreating(ctx, vars, "createPermissions");
  const final = await mutate(deps, ctx, async (tx, change) => {
    const key = await findKey(tx, workspaceId, keyId, true);
    const ref = { workspaceId, keyId: key.id };
    let result: PermissionRow[];
    if (kind === "set") result = await setKeyPermissions(tx, change, ref, slugs, creating);
    else if (kind === "add") {
      result = await changeKeyPermissions(
        tx,
        change,
        ref,
        await ensurePermissions(tx, change, workspaceId, slugs, creating),
        [],
      );
    } else {
      const existing = await permissionsBySlugs(tx, workspaceId, slugs);
      const known = new Set(existing.map((p) => p.slug));
      const unknown = slugs.find((s) => !known.has(s));
      if (unknown !== undefined) throw errors.permissionNotFound(unknown);
      result = await changeKeyPermissions(tx, change, ref, [], existing);
    }
    change.invalidate({ kind: "key", workspaceId, apiId: key.apiId, id: key.id, hash: key.hash });
    return result;
  });
  return { data: final.map(toPermissionMessage) };
}

/** Grants permissions to a key directly; missing permissions are created. */
export function addPermissions(
  deps: Deps,
  req: AddPermissionsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof AddPermissionsResponseSchema>> {
  return changePermissions(deps, ctx, req.keyId, distinct(req.permissions), "add");
}

/** Takes direct permissions from a key; each slug must exist (404 permission_not_found). */
export function removePermissions(
  deps: Deps,
  req: RemovePermissionsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof RemovePermissionsResponseSchema>> {
  return changePermissions(deps, ctx, req.keyId, distinct(req.permissions), "remove");
}

/** Replaces the direct permissions of a key; missing permissions are created. */
export function setPermissions(
  deps: Deps,
  req: SetPermissionsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof SetPermissionsResponseSchema>> {
  return changePermissions(deps, ctx, req.keyId, distinct(req.permissions), "set");
}
