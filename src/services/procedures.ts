import type { DescMethod, DescService } from "@bufbuild/protobuf";

/** Whether a procedure needs `Authorization: Bearer <root key>`. */
export type AuthMode = "none" | "required" | "optional";

/** What one procedure demands of its caller. */
export interface Procedure {
  auth: AuthMode;
  /**
   * The root-key permissions it needs (all of them), `resource.id.action`. `{name}`
   * placeholders are filled by the procedure with ids it has resolved (`api.{apiId}.read_api`).
   */
  permission?: string | readonly string[];
  /**
   * Permissions needed only when the call does something in particular (creating missing
   * permissions, say), by name of that case; the procedure names the cases that apply.
   */
  when?: Readonly<Record<string, string>>;
}

/**
 * THE table of procedures: every procedure Latchkey serves, with the authentication it
 * needs and the root-key permission it checks. The server refuses to start if a
 * registered RPC is missing here. Permissions are `resource.id.action`, as the public
 * system names them; a granted `*` segment covers any one segment (`api.*.read_api` covers
 * `api.api_123.read_api`).
 */
export const procedures = {
  "liveness.check": { auth: "none" },
  "apis.createApi": { auth: "required", permission: "api.*.create_api" },
  "apis.getApi": { auth: "required", permission: "api.{apiId}.read_api" },
  "apis.deleteApi": { auth: "required", permission: "api.{apiId}.delete_api" },
  "apis.listKeys": {
    auth: "required",
    permission: ["api.{apiId}.read_key", "api.{apiId}.read_api"],
  },

  // Key procedures: every field that grants roles or permissions, takes them away, or creates a
  // missing permission or identity needs the grant the dedicated procedure needs for it, so an
  // API's create_key or update_key alone cannot hand out the workspace's roles. The procedure
  // names the cases from the request's shape (src/services/keys/grant-cases.ts).
  "keys.createKey": {
    auth: "required",
    permission: "api.{apiId}.create_key",
    when: {
      addRoles: "rbac.*.add_role_to_key",
      addPermissions: "rbac.*.add_permission_to_key",
      createPermissions: "rbac.*.create_permission",
      createIdentity: "identity.*.create_identity",
    },
  },
  // Optional: without a root key a key verifies in the API named by apiId, or in the
  // instance's only workspace (VERIFY_REQUIRES_ROOT_KEY turns that off). A root key without
  // this permission gets NOT_FOUND, not 403.
  "keys.verifyKey": { auth: "optional", permission: "api.{apiId}.verify_key" },
  "keys.getKey": { auth: "required", permission: "api.{apiId}.read_key" },
  "keys.whoami": { auth: "required", permission: "api.{apiId}.read_key" },
  "keys.updateKey": {
    auth: "required",
    permission: "api.{apiId}.update_key",
    when: {
      addRoles: "rbac.*.add_role_to_key",
      addPermissions: "rbac.*.add_permission_to_key",
      removeRoles: "rbac.*.remove_role_from_key",
      removePermissions: "rbac.*.remove_permission_from_key",
      createPermissions: "rbac.*.create_permission",
      createIdentity: "identity.*.create_identity",
    },
  },
  "keys.updateCredits": { auth: "required", permission: "api.{apiId}.update_key" },
  "keys.deleteKey": { auth: "required", permission: "api.{apiId}.delete_key" },
  // The new key gets the old one's roles and direct permissions, so a key holding some needs
  // the grants createKey would need to give them (decided on the key, once it is found).
  "keys.rerollKey": {
    auth: "required",
    permission: "api.{apiId}.create_key",
    when: {
      addRoles: "rbac.*.add_role_to_key",
      addPermissions: "rbac.*.add_permission_to_key",
    },
  },
  "keys.migrateKeys": {
    auth: "required",
    permission: "api.{apiId}.create_key",
    when: {
      addRoles: "rbac.*.add_role_to_key",
      addPermissions: "rbac.*.add_permission_to_key",
      createPermissions: "rbac.*.create_permission",
      createIdentity: "identity.*.create_identity",
    },
  },
  "keys.addPermissions": {
    auth: "required",
    permission: ["api.{apiId}.update_key", "rbac.*.add_permission_to_key"],
    when: { createPermissions: "rbac.*.create_permission" },
  },
  "keys.removePermissions": {
    auth: "required",
    permission: ["api.{apiId}.update_key", "rbac.*.remove_permission_from_key"],
  },
  "keys.setPermissions": {
    auth: "required",
    permission: [
      "api.{apiId}.update_key",
      "rbac.*.add_permission_to_key",
      "rbac.*.remove_permission_from_key",
    ],
    when: { createPermissions: "rbac.*.create_permission" },
  },
  // Creating the namespace on first use checks this with {namespaceId} = "*".
  "ratelimit.limit": { auth: "required", permission: "ratelimit.{namespaceId}.limit" },
  // Creating the namespace on first use checks this with {namespaceId} = "*".
  "ratelimit.multiLimit": { auth: "required", permission: "ratelimit.{namespaceId}.limit" },
  "ratelimit.setOverride": { auth: "required", permission: "ratelimit.{namespaceId}.set_override" },
  "ratelimit.getOverride": {
    auth: "required",
    permission: "ratelimit.{namespaceId}.read_override",
  },
  "ratelimit.listOverrides": {
    auth: "required",
    permission: "ratelimit.{namespaceId}.read_override",
  },
  "ratelimit.deleteOverride": {
    auth: "required",
    permission: "ratelimit.{namespaceId}.delete_override",
  },
  // Checked per row: api.*.read_analytics reads the workspace, per-API grants only those
  // APIs' rows (authorizeRows).
  "analytics.getVerifications": { auth: "required", permission: "api.{apiId}.read_analytics" },
  "analytics.listAuditLogs": { auth: "required", permission: "audit.*.read" },
  "keys.addRoles": {
    auth: "required",
    permission: ["api.{apiId}.update_key", "rbac.*.add_role_to_key"],
  },
  "keys.removeRoles": {
    auth: "required",
    permission: ["api.{apiId}.update_key", "rbac.*.remove_role_from_key"],
  },
  "keys.setRoles": {
    auth: "required",
    permission: ["api.{apiId}.update_key", "rbac.*.add_role_to_key", "rbac.*.remove_role_from_key"],
  },

  "identities.createIdentity": { auth: "required", permission: "identity.*.create_identity" },
  "identities.getIdentity": { auth: "required", permission: "identity.{identityId}.read_identity" },
  // Checked per row: the list holds only the identities the key may read (authorizeRows).
  "identities.listIdentities": {
    auth: "required",
    permission: "identity.{identityId}.read_identity",
  },
  "identities.updateIdentity": {
    auth: "required",
    permission: "identity.{identityId}.update_identity",
  },
  "identities.deleteIdentity": {
    auth: "required",
    permission: "identity.{identityId}.delete_identity",
  },

  "permissions.createPermission": { auth: "required", permission: "rbac.*.create_permission" },
  "permissions.getPermission": { auth: "required", permission: "rbac.*.read_permission" },
  "permissions.listPermissions": { auth: "required", permission: "rbac.*.read_permission" },
  "permissions.deletePermission": { auth: "required", permission: "rbac.*.delete_permission" },
  "permissions.createRole": {
    auth: "required",
    permission: "rbac.*.create_role",
    when: {
      attachPermissions: "rbac.*.add_permission_to_role",
      createPermissions: "rbac.*.create_permission",
    },
  },
  "permissions.getRole": { auth: "required", permission: "rbac.*.read_role" },
  "permissions.listRoles": { auth: "required", permission: "rbac.*.read_role" },
  "permissions.deleteRole": { auth: "required", permission: "rbac.*.delete_role" },
  "permissions.setRolePermissions": {
    auth: "required",
    permission: ["rbac.*.add_permission_to_role", "rbac.*.remove_permission_from_role"],
    when: { createPermissions: "rbac.*.create_permission" },
  },
} as const satisfies Record<string, Procedure>;

/** The name of a procedure on the /v2 door: `apis.createApi`. */
export type ProcedureName = keyof typeof procedures;

/** The /v2 namespace of a service: `latchkey.v2.ApisService` → `apis`. */
export function namespaceOf(service: DescService): string {
  const base = service.name.replace(/Service$/, "");
  return base.charAt(0).toLowerCase() + base.slice(1);
}

const byMethod = new WeakMap<DescMethod, { name: string; procedure: Procedure }>();

/** The table entry of a method; throws for a method missing from the table. */
export function procedureOf(method: DescMethod): { name: string; procedure: Procedure } {
  let found = byMethod.get(method);
  if (!found) {
    const name = `${namespaceOf(method.parent)}.${method.localName}`;
    const procedure = (procedures as Record<string, Procedure>)[name];
    if (!procedure) throw new TypeError(`procedure ${name} is missing from the procedures table`);
    found = { name, procedure };
    byMethod.set(method, found);
  }
  return found;
}

const compiled = new Map<string, string[]>();

/** Fills the `{placeholders}` of a permission template (parsed once per template). */
export function fillPermission(template: string, vars: Readonly<Record<string, string>>): string {
  let parts = compiled.get(template);
  if (!parts) {
    // Odd indexes are placeholder names: "api.{apiId}.read" → ["api.", "apiId", ".read"].
    parts = template.split(/\{(\w+)\}/);
    compiled.set(template, parts);
  }
  if (parts.length === 1) return template;
  let out = "";
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (i % 2 === 0) {
      out += part;
      continue;
    }
    const v = vars[part];
    if (v === undefined) throw new TypeError(`permission ${template} needs {${part}}`);
    out += v;
  }
  return out;
}
