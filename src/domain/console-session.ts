import { hash, timingSafeEqual } from "node:crypto";
import { randomString } from "./random.js";

/**
 * The console session's cookie. Over TLS it carries the `__Host-` prefix, with which a
 * browser accepts the cookie only when it is Secure, has Path=/ and no Domain, so a sibling
 * subdomain cannot plant one; over plain HTTP (a laptop's localhost) that prefix would be
 * refused, so the plain name is used there.
 */
export const SESSION_COOKIE = "latchkey_console";
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
/** The header every call made with a session carries: the session's CSRF token. */
export const CSRF_HEADER = "x-latchkey-csrf";

/** Length of a session secret: 43 alphanumeric characters, about 256 bits. */
const SECRET_LENGTH = 43;
const SECRET_PATTERN = /^[A-Za-z0-9]{43}$/;

/** A new session secret, the value of the cookie. */
export function newSessionSecret(): string {
  return randomString(SECRET_LENGTH);
}

/** The stored id of a session: the SHA-256 of its secret, so the table opens no session. */
export function sessionIdOf(secret: string): string {
  return hash("sha256", `session:${secret}`, "base64url");
}

/**
 * The session's CSRF token, derived from its secret: a script of the console's own origin
 * reads it from the session endpoint; a page of another origin can neither read it nor send
 * it (a custom header on a cross-origin call needs a CORS preflight the server never grants).
 */
export function csrfTokenOf(secret: string): string {
  return hash("sha256", `csrf:${secret}`, "base64url");
}

/** Whether `sent` is the session's CSRF token, compared in constant time. */
export function csrfTokenMatches(secret: string, sent: string | null | undefined): boolean {
  if (typeof sent !== "string") return false;
  const want = Buffer.from(csrfTokenOf(secret));
  const got = Buffer.from(sent);
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * The session secret in a Cookie header: the secure cookie's when both are there, undefined
 * when there is none or its value cannot be a secret (nothing malformed reaches the database).
 */
export function sessionSecretOf(cookieHeader: string | null | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  let plain: string | undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!SECRET_PATTERN.test(value)) continue;
    if (name === SECURE_SESSION_COOKIE) return value;
    if (name === SESSION_COOKIE) plain = value;
  }
  return plain;
}

/** The Set-Cookie value that gives the browser a session for `maxAgeS` seconds. */
export function sessionCookie(secret: string, maxAgeS: number, secure: boolean): string {
  const name = secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
  const attrs = [
    `${name}=${secret}`,
    "Path=/",
    `Max-Age=${maxAgeS}`,
    "HttpOnly",
    "SameSite=Strict",
  ];
  if (secure) attrs.push("Secure");
  return attrs.join("; ");
}

/** The Set-Cookie values that remove either form of the session cookie. */
export function clearedSessionCookies(secure: boolean): string[] {
  const tail = "Path=/; Max-Age=0; HttpOnly; SameSite=Strict";
  const plain = `${SESSION_COOKIE}=; ${tail}${secure ? "; Secure" : ""}`;
  return secure ? [`${SECURE_SESSION_COOKIE}=; ${tail}; Secure`, plain] : [plain];
}

/** When a session was last used and when its lifetime ends (Unix ms). */
export interface SessionTimes {
  lastSeenAt: number;
  expiresAt: number;
}

/** Whether a session is live at `now`: used within `idleMs` and before its lifetime's end. */
export function sessionLive(s: SessionTimes, now: number, idleMs: number): boolean {
  return now < s.expiresAt && now - s.lastSeenAt < idleMs;
}

/**
 * Whether a call at `now` should store the session's new last use. Not on every call: a
 * console page makes several calls a second and each would be a write. A twentieth of the
 * idle time (at most a minute) late costs the idle expiry that much precision at most.
 */
export function sessionNeedsTouch(s: SessionTimes, now: number, idleMs: number): boolean {
  return now - s.lastSeenAt >= Math.min(60_000, idleMs / 20);
}

/** Seconds the cookie should live: until the session's absolute end, whole seconds up. */
export function cookieMaxAgeS(expiresAt: number, now: number): number {
  return Math.max(0, Math.ceil((expiresAt - now) / 1000));
}
