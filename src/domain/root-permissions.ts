/**
 * Root-key permissions are three dot-separated segments, `resource.id.action`
 * (`api.*.create_key`, `api.api_123.read_key`, `rbac.*.create_role`). In a granted
 * permission a `*` segment matches any one segment of the required permission; every
 * other segment must be equal, case-sensitively. A required permission never contains
 * a wildcard the caller could exploit: it is built by the server.
 */
export function rootPermissionCovers(granted: string, required: string): boolean {
  if (granted === required) return true;
  const g = granted.split(".");
  const r = required.split(".");
  if (g.length !== r.length) return false;
  for (let i = 0; i < g.length; i++) {
    if (g[i] !== "*" && g[i] !== r[i]) return false;
  }
  return true;
}

/** True when any granted permission covers the required one. */
export function rootPermissionsAllow(granted: readonly string[], required: string): boolean {
  for (const g of granted) if (rootPermissionCovers(g, required)) return true;
  return false;
}

/** The shape a root-key permission must have when it is granted: three non-empty segments. */
export const ROOT_PERMISSION_PATTERN = /^[a-zA-Z0-9_*-]+\.[a-zA-Z0-9_*-]+\.[a-zA-Z0-9_*-]+$/;

/** The permission that grants everything; `ROOT_KEY` and `root-key create --all` use it. */
export const ALL_PERMISSIONS = "*.*.*";

/**
 * True when some granted permission could allow `action` on some `resource` id: its
 * resource segment is the resource or `*`, and its action segment the action or `*`
 * (`api.api_1.verify_key`, `api.*.*`, `*.*.*` all may verify keys of some API).
 */
export function rootPermissionsMayAllow(
  granted: readonly string[],
  resource: string,
  action: string,
): boolean {
  return granted.some((g) => {
    const [r, , a, extra] = g.split(".");
    return extra === undefined && (r === resource || r === "*") && (a === action || a === "*");
  });
}

/**
 * Which ids of `resource` the granted permissions allow `action` on: `"all"` when a grant
 * covers every id (`identity.*.read_identity`, `identity.*.*`, `*.*.*`), else the ids that
 * grants name (`identity.id_1.read_identity`, `*.id_1.*`), without repeats and in the order
 * granted. An empty list: no grant allows the action on any id. An id is in the answer exactly
 * when `rootPermissionsAllow(granted, "<resource>.<id>.<action>")` holds, so a list procedure
 * can filter its query on these ids instead of checking each row it read.
 */
export function rootPermittedIds(
  granted: readonly string[],
  resource: string,
  action: string,
): "all" | string[] {
  const ids = new Set<string>();
  for (const g of granted) {
    const [r, id, a, extra] = g.split(".");
    if (extra !== undefined || id === undefined || a === undefined) continue;
    if ((r !== resource && r !== "*") || (a !== action && a !== "*")) continue;
    if (id === "*") return "all";
    ids.add(id);
  }
  return [...ids];
}
