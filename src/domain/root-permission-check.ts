import { closest } from "./closest.js";
import { ROOT_PERMISSION_PATTERN } from "./root-permissions.js";

/** What the server checks of one resource: its actions, and whether a grant may name an id. */
interface Resource {
  actions: Set<string>;
  /** False when every check of the resource uses the id `*` (`rbac.*.create_role`). */
  takesIds: boolean;
}

/**
 * The permissions the server can ever check, from the templates of the procedures
 * (`api.{apiId}.read_api`, `rbac.*.create_role`), by resource.
 */
export function checkedResources(templates: Iterable<string>): Map<string, Resource> {
  const resources = new Map<string, Resource>();
  for (const t of templates) {
    const [resource, id, action] = t.split(".") as [string, string, string];
    const r = resources.get(resource) ?? { actions: new Set<string>(), takesIds: false };
    r.actions.add(action);
    if (id !== "*") r.takesIds = true;
    resources.set(resource, r);
  }
  return resources;
}

/** Why a permission to grant would never allow anything, and the nearest one that would. */
export interface GrantProblem {
  problem: string;
  suggestion?: string;
}

/**
 * Checks a permission before it is granted to a root key: well formed, and able to cover
 * something the server checks. A `*` segment stays what it is on the server, a wildcard:
 * `api.*.*`, `*.*.read_api` and `*.*.*` pass. Undefined when the permission is fine.
 */
export function grantProblem(
  permission: string,
  resources: ReadonlyMap<string, Resource>,
): GrantProblem | undefined {
  const [resource = "", id = "", action = ""] = permission.split(".");
  const suggestion = () => nearestGrant(permission, id, resources);
  if (!ROOT_PERMISSION_PATTERN.test(permission)) {
    return {
      problem: "is not resource.id.action (e.g. api.*.create_key)",
      suggestion: suggestion(),
    };
  }
  if (resource !== "*" && !resources.has(resource)) {
    return { problem: `names no resource the server checks`, suggestion: suggestion() };
  }
  const actions =
    resource === "*"
      ? [...resources.values()].flatMap((r) => [...r.actions])
      : [...(resources.get(resource) as Resource).actions];
  if (action !== "*" && !actions.includes(action)) {
    return { problem: `names no action the server checks`, suggestion: suggestion() };
  }
  if (resource !== "*" && id !== "*" && !(resources.get(resource) as Resource).takesIds) {
    return {
      problem: `names an id, but ${resource} permissions are workspace-wide (id *)`,
      suggestion: suggestion(),
    };
  }
  return undefined;
}

/** The checked permission nearest to `permission`, keeping its id where ids are taken. */
function nearestGrant(
  permission: string,
  id: string,
  resources: ReadonlyMap<string, Resource>,
): string | undefined {
  const candidates: string[] = [];
  for (const [resource, r] of resources) {
    const grantedId = r.takesIds && /^[a-zA-Z0-9_*-]+$/.test(id) ? id : "*";
    for (const action of r.actions) candidates.push(`${resource}.${grantedId}.${action}`);
  }
  return closest(permission, candidates);
}
