import { hashKey } from "../domain/key-material.js";
import { ALL_PERMISSIONS } from "../domain/root-permissions.js";
import type { Principal } from "./call.js";

/** The audit actor id of the environment's ROOT_KEY: fixed, as the key has no row. */
export const ENVIRONMENT_ROOT_KEY_ID = "rk_environment";

/**
 * The environment's ROOT_KEY, held in memory only: the SHA-256 of its secret and the
 * principal it authenticates as (`*.*.*` in the default workspace). No part of it is stored.
 */
export interface EnvironmentRootKey {
  readonly hash: Buffer;
  readonly principal: Principal;
}

/** The in-memory form of the environment's ROOT_KEY, acting in `workspaceId`. */
export function environmentRootKey(secret: string, workspaceId: string): EnvironmentRootKey {
  return {
    hash: Buffer.from(hashKey(secret), "base64"),
    principal: {
      rootKeyId: ENVIRONMENT_ROOT_KEY_ID,
      workspaceId,
      permissions: [ALL_PERMISSIONS],
    },
  };
}
