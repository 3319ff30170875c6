import type { MessageInitShape } from "@bufbuild/protobuf";
import type { PermissionSchema, RoleSchema } from "../../../gen/latchkey/v2/permissions_pb.js";
import type { PermissionRow } from "../../storage/queries/permissions.js";
import type { RoleRow } from "../../storage/queries/roles.js";

/** A permission as returned by reads; the description is omitted when empty. */
export function toPermissionMessage(p: PermissionRow): MessageInitShape<typeof PermissionSchema> {
  return {
    id: p.id,
    name: p.name,
    slug: p.slug,
    ...(p.description ? { description: p.description } : {}),
  };
}

/** A role as returned by reads, with its permissions sorted by slug. */
export function toRoleMessage(
  r: RoleRow,
  permissions: readonly PermissionRow[],
): MessageInitShape<typeof RoleSchema> {
  return {
    id: r.id,
    name: r.name,
    ...(r.description ? { description: r.description } : {}),
    permissions: permissions.map(toPermissionMessage),
  };
}
