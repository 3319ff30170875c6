import { MAX_PREVIOUS_PEPPERS, MIN_PEPPER_LENGTH } from "../domain/key-hashing.js";
import { boolean, ConfigError, integer, oneOf, optional, type Setting, text } from "./parsers.js";
import { checkDatabaseUrl, checkRedisUrl } from "./urls.js";

/** Port of the grpc-js door; `off` leaves gRPC to the main port only. */
const grpcPort: Setting<number | undefined> = {
  env: "GRPC_PORT",
  help: "gRPC through grpc-js (the fast gRPC door); off disables it, 0 picks a free port",
  shownDefault: "9090",
  parse(raw, label) {
    if (raw === "off") return undefined;
    return integer("GRPC_PORT", 9090, 0, 65535, "").parse(raw, label);
  },
};

function rootKeyCheck(value: string, label: string): string {
  if (value.length < 16 || /\s/.test(value)) {
    throw new ConfigError(`${label}: must be at least 16 characters without whitespace`);
  }
  return value;
}

/** Absolute http(s) URL without query or fragment; trailing slashes are dropped. */
function docsUrlCheck(value: string, label: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.search || url.hash) {
    throw new ConfigError(`${label}=${value}: must be an absolute http(s) URL without query`);
  }
  return value.replace(/\/+$/, "");
}

/** A pepper's value never appears in an error: only the variable and what is wrong. */
function pepperCheck(pepper: string, label: string): string {
  if (pepper.length < MIN_PEPPER_LENGTH || /[\s,]/.test(pepper)) {
    throw new ConfigError(
      `${label}: a pepper must be at least ${MIN_PEPPER_LENGTH} characters, without whitespace or commas`,
    );
  }
  return pepper;
}

function previousPeppersCheck(list: string, label: string): string {
  const peppers = list.split(",");
  for (const p of peppers) pepperCheck(p, label);
  if (peppers.length > MAX_PREVIOUS_PEPPERS) {
    throw new ConfigError(`${label}: at most ${MAX_PREVIOUS_PEPPERS} comma-separated peppers`);
  }
  return list;
}

/**
 * THE table of settings: every one Latchkey reads from its environment, with its bounds.
 * `loadConfig` reads them, `latchkey serve` takes each as a flag, its help lists them, and
 * docs/deploying.md has a row for each (a unit test keeps the docs complete).
 */
export const SETTINGS = {
  port: integer("PORT", 8080, 0, 65535, "main port: /v2 JSON, Connect, gRPC-web and gRPC"),
  grpcPort,
  host: text("HOST", "0.0.0.0", "interface to bind"),
  adminPort: integer(
    "ADMIN_PORT",
    9091,
    0,
    65535,
    "admin port: /metrics, /health/live and /health/ready (0 picks a free port)",
  ),
  adminHost: text("ADMIN_HOST", "127.0.0.1", "interface the admin port binds"),
  readyTimeoutMs: integer(
    "READY_TIMEOUT_MS",
    2_000,
    50,
    60_000,
    "longest a readiness check waits for the database or Redis before calling it failing",
  ),
  readyCacheMs: integer(
    "READY_CACHE_MS",
    1_000,
    0,
    60_000,
    "how long a readiness result is reused, however often it is asked",
  ),
  databaseUrl: optional("DATABASE_URL", "PostgreSQL URL; unset: embedded PGlite in DATA_DIR", {
    secret: true,
    check: checkDatabaseUrl,
  }),
  dataDir: text("DATA_DIR", "./data", "PGlite directory (without DATABASE_URL), one process"),
  startupWaitS: integer(
    "STARTUP_WAIT_S",
    30,
    0,
    3600,
    "seconds to keep retrying PostgreSQL and Redis at start while they come up",
  ),
  redisUrl: optional("REDIS_URL", "Redis for rate-limit counters; unset: in this process", {
    secret: true,
    check: checkRedisUrl,
  }),
  rootKey: optional("ROOT_KEY", "a root key with *.*.* held in memory (16+ characters)", {
    secret: true,
    check: rootKeyCheck,
  }),
  bootstrapRootKeyFile: optional(
    "BOOTSTRAP_ROOT_KEY_FILE",
    "where the first start writes its root key (mode 0600) when stdout is not a terminal",
    { shownDefault: "DATA_DIR/first-root-key" },
  ),
  docsUrl: optional("DOCS_URL", "absolute base of error type URLs", { check: docsUrlCheck }),
  keyHashPepper: optional("KEY_HASH_PEPPER", "server-side secret new key hashes are HMACs under", {
    secret: true,
    check: pepperCheck,
  }),
  keyHashPepperPrevious: optional(
    "KEY_HASH_PEPPER_PREVIOUS",
    `up to ${MAX_PREVIOUS_PEPPERS} comma-separated former peppers still accepted`,
    { secret: true, check: previousPeppersCheck },
  ),
  // A string, not the union: pino takes any level name, and tests set theirs.
  logLevel: oneOf<string>(
    "LOG_LEVEL",
    ["trace", "debug", "info", "warn", "error", "fatal", "silent"],
    "info",
    "log level",
  ),
  verifyRequiresRootKey: boolean(
    "VERIFY_REQUIRES_ROOT_KEY",
    false,
    "keys.verifyKey requires a root key",
  ),
  ratelimitFailureMode: oneOf(
    "RATELIMIT_FAILURE_MODE",
    ["open", "closed"],
    "open",
    "what rate limits do while Redis is unreachable",
  ),
  cacheMaxEntries: integer("CACHE_MAX_ENTRIES", 100_000, 1, 10_000_000, "entries per cache"),
  cacheTtlMs: integer("CACHE_TTL_MS", 10_000, 0, 30_000, "cache time to live"),
  eventBufferSize: integer(
    "EVENT_BUFFER_SIZE",
    100_000,
    1,
    10_000_000,
    "verification events held in memory at most",
  ),
  eventBufferBytes: integer(
    "EVENT_BUFFER_BYTES",
    67_108_864,
    1_048_576,
    17_179_869_184,
    "memory held for encoded events at most",
  ),
  eventFlushIntervalMs: integer(
    "EVENT_FLUSH_INTERVAL_MS",
    1_000,
    10,
    60_000,
    "how often buffered events are written",
  ),
  eventRetentionDays: integer("EVENT_RETENTION_DAYS", 90, 1, 3650, "days analytics is kept"),
  analyticsTimeoutMs: integer(
    "ANALYTICS_TIMEOUT_MS",
    5_000,
    100,
    300_000,
    "longest an analytics query may run",
  ),
  analyticsMaxRows: integer(
    "ANALYTICS_MAX_ROWS",
    10_000,
    1,
    1_000_000,
    "most rows an analytics query may return",
  ),
  databasePoolSize: integer(
    "DATABASE_POOL_SIZE",
    10,
    1,
    1_000,
    "connections of the main PostgreSQL pool",
  ),
  statementTimeoutMs: integer(
    "STATEMENT_TIMEOUT_MS",
    10_000,
    0,
    3_600_000,
    "longest one statement may run (0: no bound)",
  ),
  analyticsPoolSize: integer(
    "ANALYTICS_POOL_SIZE",
    2,
    1,
    100,
    "connections of the analytics PostgreSQL pool",
  ),
  analyticsMaxConcurrentPerWorkspace: integer(
    "ANALYTICS_MAX_CONCURRENT_PER_WORKSPACE",
    2,
    1,
    100,
    "analytics queries one workspace runs at once per node",
  ),
  migrateKeysMaxConcurrentPerWorkspace: integer(
    "MIGRATE_KEYS_MAX_CONCURRENT_PER_WORKSPACE",
    1,
    1,
    100,
    "keys.migrateKeys calls one workspace runs at once per node",
  ),
  connectionIdleTimeoutMs: integer(
    "CONNECTION_IDLE_TIMEOUT_MS",
    30_000,
    100,
    3_600_000,
    "an idle connection is closed after this",
  ),
  requestHeadersTimeoutMs: integer(
    "REQUEST_HEADERS_TIMEOUT_MS",
    10_000,
    100,
    600_000,
    "longest a request may take to send its headers",
  ),
  requestTimeoutMs: integer(
    "REQUEST_TIMEOUT_MS",
    30_000,
    100,
    3_600_000,
    "longest a whole request may take to arrive",
  ),
  maxConnections: integer(
    "MAX_CONNECTIONS",
    10_000,
    1,
    1_000_000,
    "open connections per listening port",
  ),
  h2MaxConcurrentStreams: integer(
    "H2_MAX_CONCURRENT_STREAMS",
    100,
    1,
    10_000,
    "streams per HTTP/2 or gRPC session",
  ),
  shutdownTimeoutMs: integer(
    "SHUTDOWN_TIMEOUT_MS",
    10_000,
    0,
    600_000,
    "how long a stop waits for requests, then for event writes",
  ),
} as const satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;

/** Every setting's parsed value, by name. */
export type Settings = { [K in SettingName]: ReturnType<(typeof SETTINGS)[K]["parse"]> };

/** The `serve` flag of a setting, without dashes: `GRPC_PORT` → `grpc-port`. */
export function flagOf(setting: Setting<unknown>): string {
  return setting.env.toLowerCase().replaceAll("_", "-");
}
