import { ConfigError } from "./parsers.js";

// Connection URLs carry passwords: nothing here ever puts a URL's text in a message. What a
// message may show is the host, port and database, as `describe*` returns them.

interface PostgresUrlParts {
  hosts: string;
  database: string;
}

/**
 * Splits a PostgreSQL URL as postgres.js does: the host list may name several hosts
 * (`h1:5432,h2:5432`), which WHATWG URL parsing refuses, so the URL is parsed with the first.
 */
function postgresParts(url: string): PostgresUrlParts | undefined {
  const scheme = /^(postgres|postgresql):\/\//.exec(url);
  if (!scheme) return undefined;
  const authority = url.slice(scheme[0].length).split(/[?/]/)[0] ?? "";
  const hosts = authority.slice(authority.indexOf("@") + 1);
  try {
    const parsed = new URL(url.replace(hosts, hosts.split(",")[0] ?? ""));
    const database = decodeURIComponent(parsed.pathname.slice(1));
    return { hosts: decodeURIComponent(hosts) || "localhost", database };
  } catch {
    return undefined;
  }
}

export function checkDatabaseUrl(value: string, label: string): string {
  if (!postgresParts(value)) {
    throw new ConfigError(
      `${label}: not a PostgreSQL URL; expected postgres://user:password@host:port/database (the value is not shown: it may hold a password)`,
    );
  }
  return value;
}

/** `host:port/database` of a checked PostgreSQL URL, without user or password. */
export function describeDatabaseUrl(url: string): string {
  const parts = postgresParts(url);
  return parts ? `${parts.hosts}/${parts.database}` : "the DATABASE_URL";
}

export function checkRedisUrl(value: string, label: string): string {
  if (/^rediss?:\/\//.test(value)) {
    try {
      new URL(value);
      return value;
    } catch {
      // refused below
    }
  } else if (value.startsWith("/")) return value; // a Unix socket path
  throw new ConfigError(
    `${label}: not a Redis URL; expected redis://[:password@]host:port[/db] or rediss://... (the value is not shown: it may hold a password)`,
  );
}

/** `host:port` of a checked Redis URL (or its socket path), without password. */
export function describeRedisUrl(url: string): string {
  if (url.startsWith("/")) return url;
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "6379"}`;
}
