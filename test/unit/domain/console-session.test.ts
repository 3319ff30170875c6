import { describe, expect, it } from "vitest";
import {
  clearedSessionCookies,
  cookieMaxAgeS,
  csrfTokenMatches,
  csrfTokenOf,
  newSessionSecret,
  SECURE_SESSION_COOKIE,
  SESSION_COOKIE,
  sessionCookie,
  sessionIdOf,
  sessionLive,
  sessionNeedsTouch,
  sessionSecretOf,
} from "../../../src/domain/console-session.js";

describe("console session secrets", () => {
  it("are 43 alphanumeric characters, different every time", () => {
    const a = newSessionSecret();
    expect(a).toMatch(/^[A-Za-z0-9]{43}$/);
    expect(newSessionSecret()).not.toBe(a);
  });

  it("are stored as a hash, and the CSRF token is another hash of them", () => {
    const secret = newSessionSecret();
    expect(sessionIdOf(secret)).not.toContain(secret);
    expect(csrfTokenOf(secret)).not.toBe(sessionIdOf(secret));
    expect(csrfTokenMatches(secret, csrfTokenOf(secret))).toBe(true);
    expect(csrfTokenMatches(secret, csrfTokenOf(newSessionSecret()))).toBe(false);
    expect(csrfTokenMatches(secret, sessionIdOf(secret))).toBe(false);
    expect(csrfTokenMatches(secret, "")).toBe(false);
    expect(csrfTokenMatches(secret, null)).toBe(false);
  });
});

describe("the session cookie", () => {
  const secret = "a".repeat(43);

  it("is read from a Cookie header, the secure form first, and nothing malformed", () => {
    expect(sessionSecretOf(`x=1; ${SESSION_COOKIE}=${secret}`)).toBe(secret);
    const other = "b".repeat(43);
    expect(sessionSecretOf(`${SESSION_COOKIE}=${secret}; ${SECURE_SESSION_COOKIE}=${other}`)).toBe(
      other,
    );
    expect(sessionSecretOf(`${SESSION_COOKIE}=short`)).toBeUndefined();
    expect(sessionSecretOf(`${SESSION_COOKIE}=${"a".repeat(42)}'`)).toBeUndefined();
    expect(sessionSecretOf(`other_${SESSION_COOKIE}=${secret}`)).toBeUndefined();
    expect(sessionSecretOf(undefined)).toBeUndefined();
    expect(sessionSecretOf("")).toBeUndefined();
  });

  it("is HttpOnly, SameSite=Strict and Path=/, and Secure with the __Host- prefix over TLS", () => {
    expect(sessionCookie(secret, 60, false)).toBe(
      `${SESSION_COOKIE}=${secret}; Path=/; Max-Age=60; HttpOnly; SameSite=Strict`,
    );
    expect(sessionCookie(secret, 60, true)).toBe(
      `${SECURE_SESSION_COOKIE}=${secret}; Path=/; Max-Age=60; HttpOnly; SameSite=Strict; Secure`,
    );
  });

  it("is removed in both forms over TLS", () => {
    expect(clearedSessionCookies(false)).toEqual([
      `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict`,
    ]);
    expect(clearedSessionCookies(true)).toHaveLength(2);
    for (const c of clearedSessionCookies(true)) expect(c).toContain("Max-Age=0");
  });

  it("lives until the session's absolute end, in whole seconds up", () => {
    expect(cookieMaxAgeS(10_500, 0)).toBe(11);
    expect(cookieMaxAgeS(10_000, 20_000)).toBe(0);
  });
});

describe("a session's life", () => {
  const idle = 600_000;
  const times = { lastSeenAt: 1_000_000, expiresAt: 5_000_000 };

  it("ends when idle for the idle time, or at its absolute end", () => {
    expect(sessionLive(times, 1_000_000 + idle - 1, idle)).toBe(true);
    expect(sessionLive(times, 1_000_000 + idle, idle)).toBe(false);
    expect(sessionLive({ ...times, lastSeenAt: 4_999_000 }, 4_999_999, idle)).toBe(true);
    expect(sessionLive({ ...times, lastSeenAt: 4_999_000 }, 5_000_000, idle)).toBe(false);
  });

  it("is touched at most every twentieth of the idle time, and at least every minute", () => {
    expect(sessionNeedsTouch(times, 1_000_000 + 29_999, idle)).toBe(false);
    expect(sessionNeedsTouch(times, 1_000_000 + 30_000, idle)).toBe(true);
    const long = 24 * 3_600_000;
    expect(sessionNeedsTouch(times, 1_000_000 + 60_000, long)).toBe(true);
    expect(sessionNeedsTouch(times, 1_000_000 + 59_999, long)).toBe(false);
  });
});
