import { errors } from "../../errors/service-error.js";
import type { KeyScope } from "../../storage/queries/key-records.js";
import type { Principal } from "../call.js";
import type { Deps } from "../deps.js";

/**
 * Where a verification looks for its key: never the whole instance, as one instance serves
 * API owners who must not accept each other's keys. The API named in the request (with a
 * root key, the record must then also be of the root key's workspace); else the root key's
 * workspace; else, without either, the instance's only workspace. On an instance of several
 * workspaces a verification that names neither is refused (401): it could only be answered by
 * looking in every tenant. Costs nothing per call: the only workspace is known in memory.
 */
export function verifyScope(
  deps: Deps,
  principal: Principal | undefined,
  apiId: string | undefined,
): KeyScope {
  if (apiId !== undefined) return { apiId };
  if (principal) return { workspaceId: principal.workspaceId };
  const sole = deps.soleWorkspace.id;
  if (sole === undefined) throw errors.verificationUnscoped();
  return { workspaceId: sole };
}
