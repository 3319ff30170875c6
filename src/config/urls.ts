import { ConfigError } from "./parsers.js";

// Connection URLs carry passwords: nothing here ever puts a URL's text in a message. What a
// message may show is the host, port and database, as `describe*` returns them.

interface PostgresUrlParts {
  hosts: string;
  database: string;
}

/** Why a URL is refused; never a part of the URL itself. */
type Refusal = { refused: string };

const ENCODING = "@ / ? # % in a user or password percent-encoded as %40 %2F %3F %23 %25";
const NOT_POSTGRES = `not a PostgreSQL URL; expected postgres://user:password@host:port/database, with ${ENCODING}`;
const UNENCODED = `not a PostgreSQL URL: its user or password holds a character to encode (${ENCODING})`;

/**
 * Splits a PostgreSQL URL as postgres.js does: the host list may name several hosts
 * (`h1:5432,h2:5433`), which WHATWG URL parsing refuses, so the URL is parsed with the first.
 * A password with an unencoded `@`, `/`, `?`, `#` or `%` is refused: postgres.js would take
 * a piece of it for a host (and name it in its errors) or throw on decoding it.
 */
function postgresParts(url: string): PostgresUrlParts | Refusal {
  const scheme = /^(postgres|postgresql):\/\//.exec(url);
  if (!scheme) return { refused: NOT_POSTGRES };
  const rest = url.slice(scheme[0].length);
  const authority = rest.split(/[?/#]/)[0] ?? "";
  const at = authority.indexOf("@");
  // An @ past the host (in the path or query) or a second one in the authority is a
  // password's character that was not encoded.
  if (rest.indexOf("@") !== at || authority.indexOf("@", at + 1) !== -1) {
    return { refused: UNENCODED };
  }
  const hosts = authority.slice(at + 1);
  try {
    const parsed = new URL(url.replace(hosts, hosts.split(",")[0] ?? ""));
    // postgres.js decodes them on connecting; a bad escape would throw there.
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
    const database = decodeURIComponent(parsed.pathname.slice(1));
    return { hosts: decodeURIComponent(hosts) || "localhost", database };
  } catch {
    return { refused: NOT_POSTGRES };
  }
}

export function checkDatabaseUrl(value: string, label: string): string {
  const parts = postgresParts(value);
  if ("refused" in parts) {
    throw new ConfigError(
      `${label}: ${parts.refused} (the value is not shown: it may hold a password)`,
    );
  }
  return value;
}

/** `host:port/database` of a checked PostgreSQL URL, without user or password. */
export function describeDatabaseUrl(url: string): string {
  const parts = postgresParts(url);
  return "refused" in parts ? "the DATABASE_URL" : `${parts.hosts}/${parts.database}`;
}

export function checkRedisUrl(value: string, label: string): string {
  if (/^rediss?:\/\//.test(value)) {
    try {
      const parsed = new URL(value);
      // ioredis decodes them on connecting; a bad escape would throw there.
      decodeURIComponent(parsed.username);
      decodeURIComponent(parsed.password);
      return value;
    } catch {
      // refused below
    }
  } else if (value.startsWith("/")) return value; // a Unix socket path
  throw new ConfigError(
    `${label}: not a Redis URL; expected redis://[:password@]host:port[/db] or rediss://..., with % in a password encoded as %25 (the value is not shown: it may hold a password)`,
  );
}

/** `host:port` of a checked Redis URL (or its socket path), without password. */
export function describeRedisUrl(url: string): string {
  if (url.startsWith("/")) return url;
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "6379"}`;
}
