import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentitiesService } from "../../../gen/latchkey/v2/identities_pb.js";
import type { Deps } from "../deps.js";
import { createIdentity } from "./create-identity.js";
import { deleteIdentity } from "./delete-identity.js";
import { getIdentity } from "./get-identity.js";
import { listIdentities } from "./list-identities.js";
import { updateIdentity } from "./update-identity.js";

/** The IdentitiesService implementation. */
export function identitiesService(deps: Deps): ServiceImpl<typeof IdentitiesService> {
  return {
    createIdentity: (req, ctx) => createIdentity(deps, req, ctx),
    getIdentity: (req, ctx) => getIdentity(deps, req, ctx),
    listIdentities: (req, ctx) => listIdentities(deps, req, ctx),
    updateIdentity: (req, ctx) => updateIdentity(deps, req, ctx),
    deleteIdentity: (req, ctx) => deleteIdentity(deps, req, ctx),
  };
}
