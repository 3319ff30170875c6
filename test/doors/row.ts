import type { ProcedureName } from "../../src/services/procedures.js";
import type { Auth } from "../harness/server.js";
import type { Given } from "./given.js";

/** What a row's setup hands to the call: the body (JSON form) and, unless the workspace's root key, the auth. */
export interface Call {
  body: Record<string, unknown>;
  auth?: Auth;
}

/** One representative call of a procedure, made on every door with a setup of its own. */
export interface Row {
  name: string;
  procedure: ProcedureName;
  setup: (g: Given) => Promise<Call>;
  /** 200, or the status of the refusal. */
  status: number;
  /** The catalog code of a refusal. */
  code?: string;
  /** The violation locations of a 400 with field violations, in order. */
  locations?: string[];
}

/** A call that succeeds. */
export function ok(procedure: ProcedureName, name: string, setup: Row["setup"]): Row {
  return { name, procedure, setup, status: 200 };
}

/** A call refused with `status` and catalog `code`. */
export function refused(
  procedure: ProcedureName,
  name: string,
  status: number,
  code: string,
  setup: Row["setup"],
): Row {
  return { name, procedure, setup, status, code };
}

/** A call refused with 400 invalid_input naming these fields. */
export function invalid(
  procedure: ProcedureName,
  name: string,
  locations: string[],
  setup: Row["setup"],
): Row {
  return {
    name,
    procedure,
    setup,
    status: 400,
    code: "err:svc:application:invalid_input",
    locations,
  };
}

/** Catalog codes the rows refer to often. */
export const CODES = {
  forbidden: "err:svc:authorization:insufficient_permissions",
  precondition: "err:svc:application:precondition_failed",
  apiNotFound: "err:svc:data:api_not_found",
  keyNotFound: "err:svc:data:key_not_found",
  identityNotFound: "err:svc:data:identity_not_found",
  identityExists: "err:svc:data:identity_already_exists",
  permissionNotFound: "err:svc:data:permission_not_found",
  permissionExists: "err:svc:data:permission_already_exists",
  roleNotFound: "err:svc:data:role_not_found",
  roleExists: "err:svc:data:role_already_exists",
  namespaceNotFound: "err:svc:data:ratelimit_namespace_not_found",
  namespaceGone: "err:svc:data:ratelimit_namespace_gone",
  overrideNotFound: "err:svc:data:ratelimit_override_not_found",
} as const;
