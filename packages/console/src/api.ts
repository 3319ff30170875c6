import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { createLatchkeyClient, type LatchkeyClient } from "../../client/src/index.ts";

/** What the server says about the signed-in session (never the root key itself). */
export interface Session {
  rootKeyId: string;
  workspaceId: string;
  permissions: string[];
  csrfToken: string;
  expiresAt: number;
  idleTimeoutS: number;
}

/** The typed clients of every service (those of @latchkey/client), through the session. */
export type Latchkey = LatchkeyClient;

let onSignedOut: () => void = () => {};
/** Sets what happens when a call finds the session ended (401): back to the sign-in page. */
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

/**
 * The typed Connect clients for a session. The browser sends the HttpOnly cookie by itself
 * (same origin); each call adds the session's CSRF token, without which the server refuses it.
 */
export function clientsFor(session: Session): Latchkey {
  const csrf: Interceptor = (next) => async (req) => {
    req.header.set("x-latchkey-csrf", session.csrfToken);
    try {
      return await next(req);
    } catch (err) {
      if (ConnectError.from(err).code === Code.Unauthenticated) onSignedOut();
      throw err;
    }
  };
  const transport = createConnectTransport({
    baseUrl: window.location.origin,
    interceptors: [csrf],
  });
  return createLatchkeyClient({ transport });
}

interface Envelope<T> {
  data?: T;
  error?: { detail: string; status: number };
}

async function sessionCall(path: string, init: RequestInit): Promise<Session> {
  const res = await fetch(path, { ...init, credentials: "same-origin", cache: "no-store" });
  const body = (await res.json().catch(() => ({}))) as Envelope<Session>;
  if (!res.ok || !body.data) throw new Error(body.error?.detail ?? `HTTP ${res.status}`);
  return body.data;
}

/** The current session, or null when there is none (the sign-in page is shown). */
export async function currentSession(): Promise<Session | null> {
  try {
    return await sessionCall("/console/api/session", { method: "GET" });
  } catch {
    return null;
  }
}

/** Exchanges a root key for a session; the key is sent once and not kept anywhere. */
export function signIn(rootKey: string): Promise<Session> {
  return sessionCall("/console/api/sign-in", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ rootKey }),
  });
}

/** Ends the session on the server and removes its cookie. */
export async function signOut(session: Session): Promise<void> {
  await fetch("/console/api/sign-out", {
    method: "POST",
    headers: { "x-latchkey-csrf": session.csrfToken },
    credentials: "same-origin",
  });
}

/**
 * A refusal in words an operator can act on. A 403 names the permission the root key lacks
 * (the server's detail says which), so a narrow key sees why, not a crash.
 */
export function describeError(err: unknown, doing: string): string {
  const e = ConnectError.from(err);
  const missing = /Missing permission: '([^']+)'/.exec(e.rawMessage)?.[1];
  if (e.code === Code.PermissionDenied)
    return `Your root key may not ${doing}${missing ? ` (it needs ${missing})` : ""}.`;
  if (e.code === Code.Unauthenticated) return "Your session has ended: sign in again.";
  return `Could not ${doing}: ${e.rawMessage}`;
}

/** Unix ms (int64 as bigint) as a local date and time. */
export function when(ms: bigint | number | undefined): string {
  if (ms === undefined || ms === 0n || ms === 0) return "—";
  return new Date(Number(ms)).toLocaleString();
}

/**
 * Whether the session's root key holds `permission` (`resource.id.action`, `*` matching one
 * segment), to hide what it could only be refused; the server decides in every case.
 */
export function mayDo(session: Session, permission: string): boolean {
  const want = permission.split(".");
  return session.permissions.some((granted) => {
    const have = granted.split(".");
    return have.length === want.length && have.every((seg, i) => seg === "*" || seg === want[i]);
  });
}
