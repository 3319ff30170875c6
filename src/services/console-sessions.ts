import {
  newSessionSecret,
  sessionIdOf,
  sessionLive,
  sessionNeedsTouch,
} from "../domain/console-session.js";
import { errors } from "../errors/service-error.js";
import {
  type ConsoleSessionWithKey,
  consoleSessionDelete,
  consoleSessionFind,
  consoleSessionInsert,
  consoleSessionTouch,
} from "../storage/queries/console-sessions.js";
import { authenticateRootKey } from "./auth.js";
import type { Principal } from "./call.js";
import type { Deps } from "./deps.js";
import { ENVIRONMENT_ROOT_KEY_ID } from "./environment-root-key.js";

/** A session a sign-in made: the secret for the cookie (shown once) and who it acts as. */
export interface SignedIn {
  secret: string;
  principal: Principal;
  expiresAt: number;
}

/** The idle bound of console sessions, in milliseconds. */
function idleMs(deps: Deps): number {
  return deps.config.consoleSessionIdleS * 1000;
}

/**
 * Exchanges a root key for a console session. The key is checked exactly as the
 * authentication of a call checks it (401 for an unknown, revoked or expired one), and only
 * then is anything written: one row holding the root key's id, its workspace and its times.
 * The same transaction ends that root key's expired sessions and those beyond its bound.
 */
export async function signIn(deps: Deps, rootKey: string): Promise<SignedIn> {
  const principal = await authenticateRootKey(deps, rootKey);
  const now = deps.clock.now();
  const secret = newSessionSecret();
  const expiresAt = now + deps.config.consoleSessionMaxS * 1000;
  const row = {
    id: sessionIdOf(secret),
    rootKeyId: principal.rootKeyId,
    workspaceId: principal.workspaceId,
    createdAt: now,
    lastSeenAt: now,
    expiresAt,
  };
  await deps.db.transaction((tx) =>
    consoleSessionInsert(tx, row, now - idleMs(deps), deps.config.consoleSessionsPerRootKey),
  );
  return { secret, principal, expiresAt };
}

/**
 * The principal of a console session's call: its root key as it is now (permissions read
 * on every call, so a narrowed key narrows the session at once), or 401 when the session is
 * unknown, idle too long, past its lifetime, or its root key is revoked, expired or gone (the
 * row is then deleted). A live session's last use moves on, now and then (see
 * sessionNeedsTouch), in a write of its own.
 */
export async function resolveSession(
  deps: Deps,
  secret: string,
): Promise<{ principal: Principal; expiresAt: number }> {
  const id = sessionIdOf(secret);
  const row = await consoleSessionFind(deps.db, id);
  const now = deps.clock.now();
  if (!row || !sessionLive(row, now, idleMs(deps))) throw errors.consoleSessionEnded();
  const principal = principalOf(deps, row, now);
  if (!principal) {
    await consoleSessionDelete(deps.db, id);
    throw errors.consoleSessionEnded();
  }
  if (sessionNeedsTouch(row, now, idleMs(deps))) await consoleSessionTouch(deps.db, id, now);
  return { principal, expiresAt: row.expiresAt };
}

/** The session's root key as a principal, or undefined when that key no longer holds. */
function principalOf(deps: Deps, row: ConsoleSessionWithKey, now: number): Principal | undefined {
  if (row.rootKeyId === ENVIRONMENT_ROOT_KEY_ID) {
    // The environment's ROOT_KEY has no row: the session holds while this process has it.
    const env = deps.environmentRootKey?.principal;
    return env && env.workspaceId === row.workspaceId ? env : undefined;
  }
  if (!row.keyFound || row.keyRevokedAt !== null) return undefined;
  if (row.keyExpiresAt !== null && row.keyExpiresAt <= now) return undefined;
  return {
    rootKeyId: row.rootKeyId,
    workspaceId: row.workspaceId,
    permissions: row.keyPermissions ?? [],
  };
}

/** Ends a session (sign-out); answers whether there was one. */
export function signOut(deps: Deps, secret: string): Promise<boolean> {
  return consoleSessionDelete(deps.db, sessionIdOf(secret));
}
