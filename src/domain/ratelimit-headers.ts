/**
 * The rate-limit header fields of the IETF HTTPAPI draft "RateLimit header fields for HTTP"
 * (draft-ietf-httpapi-ratelimit-headers-11): `RateLimit-Policy` lists the quota policies a
 * request was held to, `RateLimit` what is left of each, both Structured Field lists (RFC
 * 9651) of strings with parameters:
 *
 *     RateLimit-Policy: "requests";q=100;w=60, "burst";q=10;w=1
 *     RateLimit: "requests";r=42;t=17, "burst";r=9;t=1
 *
 * `q` is the limit, `w` the window in seconds, `r` the quota left in the current window and
 * `t` the seconds until it ends (our windows are fixed, aligned to the epoch). Windows of
 * milliseconds that are not whole seconds are rounded up, as sub-second windows cannot be
 * expressed. `Retry-After` (RFC 9110) says when the first refused limit has room again.
 */

/** One limit a decision evaluated, as the headers report it. */
export interface LimitWindow {
  /** The policy's name: the limit's name, or a rate-limit namespace. */
  name: string;
  limit: number;
  durationMs: number;
  remaining: number;
  /** End of the current window, Unix ms. */
  resetMs: number;
  /** Whether this limit refused the request. */
  exceeded: boolean;
}

/** The two header fields of some limits. */
export interface RateLimitFields {
  policy: string;
  current: string;
}

/** The largest Integer a Structured Field may hold (15 digits). */
const SF_INTEGER_MAX = 999_999_999_999_999;

/** An Integer item of a Structured Field: a whole number from 0 to 10^15 - 1. */
function sfInteger(n: number): number {
  if (!Number.isFinite(n) || n <= 0) return 0;
  return Math.min(Math.floor(n), SF_INTEGER_MAX);
}

/**
 * A String item of a Structured Field. A String holds printable ASCII only, with `"` and `\`
 * escaped; any other character of a name (a limit name may be any text) is written as the
 * percent-encoding of its UTF-8 bytes, and so is `%` itself, so that two names never meet.
 */
export function sfString(text: string): string {
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (ch === "%" || code < 0x20 || code > 0x7e) out += encodeURIComponent(ch);
    else if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else out += ch;
  }
  return `"${out}"`;
}

/** Whole seconds from `now` until `atMs`, rounded up; 0 once it is past. */
export function secondsUntil(atMs: number, now: number): number {
  return sfInteger(Math.ceil((atMs - now) / 1000));
}

/**
 * The most characters either field holds. Clients bound the headers they read (Node's
 * default is 16 KiB for all of them); a decision of many limits with long names could exceed
 * that and make its answer unreadable, so the fields list the limits that fit, in order (the
 * draft lets a server leave the fields out of any answer).
 */
export const MAX_FIELD_LENGTH = 4096;

/**
 * The header fields of the limits a decision evaluated, as many as fit in MAX_FIELD_LENGTH;
 * undefined when it evaluated none.
 */
export function rateLimitFields(
  limits: readonly LimitWindow[],
  now: number,
): RateLimitFields | undefined {
  let policy = "";
  let current = "";
  for (const l of limits) {
    const name = sfString(l.name);
    const window = Math.max(1, sfInteger(Math.ceil(l.durationMs / 1000)));
    const p = `${name};q=${sfInteger(l.limit)};w=${window}`;
    const c = `${name};r=${sfInteger(l.remaining)};t=${secondsUntil(l.resetMs, now)}`;
    const sep = policy === "" ? "" : ", ";
    if (policy.length + sep.length + p.length > MAX_FIELD_LENGTH) break;
    if (current.length + sep.length + c.length > MAX_FIELD_LENGTH) break;
    policy += sep + p;
    current += sep + c;
  }
  return policy === "" ? undefined : { policy, current };
}

/**
 * The `Retry-After` of a refused decision: the seconds until every limit that refused it has
 * a new window (at least 1), or undefined when none did.
 */
export function retryAfterSeconds(limits: readonly LimitWindow[], now: number): number | undefined {
  let latest: number | undefined;
  for (const l of limits) {
    if (l.exceeded && (latest === undefined || l.resetMs > latest)) latest = l.resetMs;
  }
  return latest === undefined ? undefined : Math.max(1, secondsUntil(latest, now));
}
