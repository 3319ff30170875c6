import type { ServiceImpl } from "@connectrpc/connect";
import type { KeysService } from "../../../gen/latchkey/v2/keys_pb.js";
import type { Deps } from "../deps.js";
import { addPermissions } from "./add-permissions.js";
import { addRoles } from "./add-roles.js";
import { createKey } from "./create-key.js";
import { deleteKey } from "./delete-key.js";
import { getKey } from "./get-key.js";
import { migrateKeys } from "./migrate-keys.js";
import { removePermissions } from "./remove-permissions.js";
import { removeRoles } from "./remove-roles.js";
import { rerollKey } from "./reroll-key.js";
import { setPermissions } from "./set-permissions.js";
import { setRoles } from "./set-roles.js";
import { settleCredits } from "./settle-credits.js";
import { updateCredits } from "./update-credits.js";
import { updateKey } from "./update-key.js";
import { verifyKey } from "./verify-key.js";
import { whoami } from "./whoami.js";

/** The KeysService implementation. */
export function keysService(deps: Deps): ServiceImpl<typeof KeysService> {
  return {
    createKey: (req, ctx) => createKey(deps, req, ctx),
    verifyKey: (req, ctx) => verifyKey(deps, req, ctx),
    getKey: (req, ctx) => getKey(deps, req, ctx),
    whoami: (req, ctx) => whoami(deps, req, ctx),
    updateKey: (req, ctx) => updateKey(deps, req, ctx),
    updateCredits: (req, ctx) => updateCredits(deps, req, ctx),
    settleCredits: (req, ctx) => settleCredits(deps, req, ctx),
    deleteKey: (req, ctx) => deleteKey(deps, req, ctx),
    rerollKey: (req, ctx) => rerollKey(deps, req, ctx),
    migrateKeys: (req, ctx) => migrateKeys(deps, req, ctx),
    addPermissions: (req, ctx) => addPermissions(deps, req, ctx),
    removePermissions: (req, ctx) => removePermissions(deps, req, ctx),
    setPermissions: (req, ctx) => setPermissions(deps, req, ctx),
    addRoles: (req, ctx) => addRoles(deps, req, ctx),
    removeRoles: (req, ctx) => removeRoles(deps, req, ctx),
    setRoles: (req, ctx) => setRoles(deps, req, ctx),
  };
}
