import { KeyHashing, MAX_PREVIOUS_PEPPERS, MIN_PEPPER_LENGTH } from "./domain/key-hashing.js";

/** Everything Latchkey reads from its environment, parsed and checked once at start. */
export interface Config {
  port: number;
  host: string;
  /** Port of the grpc-js door (default 9090); undefined when GRPC_PORT=off. */
  grpcPort: number | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  redisUrl: string | undefined;
  rootKey: string | undefined;
  /**
   * Absolute base of error `type` URLs; undefined means the relative reference
   * `/api-reference/errors-v2/...` (this server's pages). Never taken from a request.
   */
  docsUrl: string | undefined;
  /** How key secrets are stored and found (KEY_HASH_PEPPER, KEY_HASH_PEPPER_PREVIOUS). */
  keyHashing: KeyHashing;
  logLevel: string;
  verifyRequiresRootKey: boolean;
  ratelimitFailureMode: "open" | "closed";
  cacheMaxEntries: number;
  cacheTtlMs: number;
  /** Verification events held in memory at most before new ones are dropped. */
  eventBufferSize: number;
  eventBufferBytes: number;
  /** How often buffered events are written. */
  eventFlushIntervalMs: number;
  /** Analytics older than this many days is removed. */
  eventRetentionDays: number;
  /** Longest an analytics query may run (PostgreSQL). */
  analyticsTimeoutMs: number;
  /** Most rows an analytics query may return. */
  analyticsMaxRows: number;
  /** Connections of the main PostgreSQL pool (procedures, event writes). */
  databasePoolSize: number;
  /** Longest one statement of the main pool may run before PostgreSQL cancels it (0: no bound). */
  statementTimeoutMs: number;
  /** Connections of the analytics pool, apart from the main one (PostgreSQL). */
  analyticsPoolSize: number;
  /** Analytics queries one workspace may run at once on this node; more are answered 429. */
  analyticsMaxConcurrentPerWorkspace: number;
  /** migrateKeys calls one workspace may run at once on this node; more are answered 429. */
  migrateKeysMaxConcurrentPerWorkspace: number;
  /** A connection with no request in flight that sends nothing for this long is closed. */
  connectionIdleTimeoutMs: number;
  /** Longest a request may take to send its headers (HTTP/2: the preface and first HEADERS). */
  requestHeadersTimeoutMs: number;
  /** Longest a request may take to arrive whole, headers and body. */
  requestTimeoutMs: number;
  /** Open connections per listening port; beyond it new ones are closed at once. */
  maxConnections: number;
  /** Streams one HTTP/2 session (Connect/h2 or gRPC) may have open at once. */
  h2MaxConcurrentStreams: number;
  shutdownTimeoutMs: number;
  /** Largest request body on every door. */
  maxBodyBytes: number;
}

/** A configuration value that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name}=${raw}: must be an integer from ${min} to ${max}`);
  }
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(`${name}=${raw}: must be true or false`);
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if ((values as readonly string[]).includes(raw)) return raw as T;
  throw new ConfigError(`${name}=${raw}: must be one of ${values.join(", ")}`);
}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === "" ? undefined : raw;
}

/** An absolute http(s) URL without trailing slashes, or undefined when unset. */
function docsUrlSetting(env: Env): string | undefined {
  const raw = optional(env, "DOCS_URL");
  if (raw === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.search || url.hash) {
    throw new ConfigError(`DOCS_URL=${raw}: must be an absolute http(s) URL without query`);
  }
  return raw.replace(/\/+$/, "");
}

/** The bounds of every door's connections (docs/limits-and-timeouts.md). */
function connectionSettings(env: Env) {
  const requestHeadersTimeoutMs = int(env, "REQUEST_HEADERS_TIMEOUT_MS", 10_000, 100, 600_000);
  const requestTimeoutMs = int(env, "REQUEST_TIMEOUT_MS", 30_000, 100, 3_600_000);
  // The headers are part of the request: a longer headers timeout could never apply.
  if (requestHeadersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `REQUEST_HEADERS_TIMEOUT_MS=${requestHeadersTimeoutMs}: must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  return {
    connectionIdleTimeoutMs: int(env, "CONNECTION_IDLE_TIMEOUT_MS", 30_000, 100, 3_600_000),
    requestHeadersTimeoutMs,
    requestTimeoutMs,
    maxConnections: int(env, "MAX_CONNECTIONS", 10_000, 1, 1_000_000),
    h2MaxConcurrentStreams: int(env, "H2_MAX_CONCURRENT_STREAMS", 100, 1, 10_000),
  };
}

/**
 * The key-hashing peppers (docs/security.md). Their values never appear in an error:
 * only the variable and what is wrong.
 */
function keyHashingSettings(env: Env): KeyHashing {
  const check = (name: string, pepper: string) => {
    if (pepper.length < MIN_PEPPER_LENGTH || /[\s,]/.test(pepper)) {
      throw new ConfigError(
        `${name}: a pepper must be at least ${MIN_PEPPER_LENGTH} characters, without whitespace or commas`,
      );
    }
    return pepper;
  };
  const raw = optional(env, "KEY_HASH_PEPPER");
  const current = raw === undefined ? undefined : check("KEY_HASH_PEPPER", raw);
  const list = optional(env, "KEY_HASH_PEPPER_PREVIOUS");
  const previous =
    list === undefined ? [] : list.split(",").map((p) => check("KEY_HASH_PEPPER_PREVIOUS", p));
  if (previous.length > MAX_PREVIOUS_PEPPERS) {
    throw new ConfigError(
      `KEY_HASH_PEPPER_PREVIOUS: at most ${MAX_PREVIOUS_PEPPERS} comma-separated peppers`,
    );
  }
  return new KeyHashing(current, previous);
}

/** Reads the configuration from environment variables (the table in docs/deploying.md). */
export function loadConfig(env: Env = process.env): Config {
  const docsUrl = docsUrlSetting(env);
  const rootKey = optional(env, "ROOT_KEY");
  if (rootKey !== undefined && (rootKey.length < 16 || /\s/.test(rootKey))) {
    throw new ConfigError("ROOT_KEY: must be at least 16 characters without whitespace");
  }
  // grpc-js serves gRPC on a port of its own (it takes whole HTTP/2 connections);
  // "off" leaves gRPC to the main port only.
  const grpcPort = optional(env, "GRPC_PORT") ?? "9090";
  return {
    port: int(env, "PORT", 8080, 0, 65535),
    host: optional(env, "HOST") ?? "0.0.0.0",
    grpcPort:
      grpcPort === "off" ? undefined : int({ GRPC_PORT: grpcPort }, "GRPC_PORT", 9090, 0, 65535),
    databaseUrl: optional(env, "DATABASE_URL"),
    dataDir: optional(env, "DATA_DIR") ?? "./data",
    redisUrl: optional(env, "REDIS_URL"),
    rootKey,
    docsUrl,
    keyHashing: keyHashingSettings(env),
    logLevel: oneOf(
      env,
      "LOG_LEVEL",
      ["trace", "debug", "info", "warn", "error", "fatal", "silent"],
      "info",
    ),
    verifyRequiresRootKey: bool(env, "VERIFY_REQUIRES_ROOT_KEY", false),
    ratelimitFailureMode: oneOf(env, "RATELIMIT_FAILURE_MODE", ["open", "closed"], "open"),
    cacheMaxEntries: int(env, "CACHE_MAX_ENTRIES", 100_000, 1, 10_000_000),
    cacheTtlMs: int(env, "CACHE_TTL_MS", 10_000, 0, 30_000),
    eventBufferSize: int(env, "EVENT_BUFFER_SIZE", 100_000, 1, 10_000_000),
    eventBufferBytes: int(env, "EVENT_BUFFER_BYTES", 67_108_864, 1_048_576, 17_179_869_184),
    eventFlushIntervalMs: int(env, "EVENT_FLUSH_INTERVAL_MS", 1_000, 10, 60_000),
    eventRetentionDays: int(env, "EVENT_RETENTION_DAYS", 90, 1, 3650),
    analyticsTimeoutMs: int(env, "ANALYTICS_TIMEOUT_MS", 5_000, 100, 300_000),
    analyticsMaxRows: int(env, "ANALYTICS_MAX_ROWS", 10_000, 1, 1_000_000),
    databasePoolSize: int(env, "DATABASE_POOL_SIZE", 10, 1, 1_000),
    statementTimeoutMs: int(env, "STATEMENT_TIMEOUT_MS", 10_000, 0, 3_600_000),
    analyticsPoolSize: int(env, "ANALYTICS_POOL_SIZE", 2, 1, 100),
    analyticsMaxConcurrentPerWorkspace: int(
      env,
      "ANALYTICS_MAX_CONCURRENT_PER_WORKSPACE",
      2,
      1,
      100,
    ),
    migrateKeysMaxConcurrentPerWorkspace: int(
      env,
      "MIGRATE_KEYS_MAX_CONCURRENT_PER_WORKSPACE",
      1,
      1,
      100,
    ),
    ...connectionSettings(env),
    shutdownTimeoutMs: int(env, "SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
    maxBodyBytes: 1024 * 1024,
  };
}
