import { availableParallelism } from "node:os";
import {
  KeyListError,
  type PublicKeySetting,
  readPublicKeySetting,
} from "../domain/github-keys.js";
import { MAX_PREVIOUS_PEPPERS, MIN_PEPPER_LENGTH } from "../domain/key-hashing.js";
import { GATEWAY_SETTINGS } from "./gateway-settings.js";
import {
  boolean,
  ConfigError,
  commaListCheck,
  documented,
  integer,
  oneOf,
  optional,
  type Setting,
  text,
} from "./parsers.js";
import { checkDatabaseUrl, checkRedisUrl } from "./urls.js";
import { WEBHOOK_SETTINGS } from "./webhook-settings.js";

/** Port of the gRPC port; `off` leaves gRPC to the main port only. */
const grpcPort: Setting<number | undefined> = {
  env: "GRPC_PORT",
  help: "gRPC only, over cleartext HTTP/2 (the fast gRPC door); off disables it, 0 picks a free port",
  shownDefault: "9090",
  accepts: "0 to 65535, off",
  parse(raw, label) {
    if (raw === "off") return undefined;
    return integer("GRPC_PORT", 9090, 0, 65535, "").parse(raw, label);
  },
};

/** The most server processes WORKERS may ask for: beyond, the database's connections run out first. */
export const MAX_WORKERS = 64;

/** Server processes on this machine; `auto` is one per core the process may use. */
const workers: Setting<number> = {
  env: "WORKERS",
  help: "server processes sharing the ports (auto: one per core); above 1 needs DATABASE_URL and REDIS_URL",
  shownDefault: "1",
  accepts: `1 to ${MAX_WORKERS}, auto`,
  parse(raw, label) {
    // A machine with more cores than MAX_WORKERS gets MAX_WORKERS: `auto` must not refuse to
    // start where it was meant to use everything.
    if (raw === "auto") return Math.min(availableParallelism(), MAX_WORKERS);
    if (raw === undefined || raw === "") return 1;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
      throw new ConfigError(
        `${label}=${raw}: must be an integer from 1 to ${MAX_WORKERS}, or auto`,
      );
    }
    return n;
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

/** The keys GitHub's secret-scanning reports are signed with; unset turns the receiver off. */
const githubSecretScanningPublicKeys: Setting<PublicKeySetting | undefined> = {
  env: "GITHUB_SECRET_SCANNING_PUBLIC_KEYS",
  help: "GitHub secret-scanning public keys (PEM, a key-list JSON, or its URL); unset: receiver off",
  shownDefault: "(unset)",
  accepts: "PEM public keys, a key-list JSON, or an http(s) URL serving one",
  parse(raw, label) {
    if (raw === undefined || raw.trim() === "") return undefined;
    try {
      return readPublicKeySetting(raw);
    } catch (err) {
      if (!(err instanceof KeyListError)) throw err;
      throw new ConfigError(`${label}: ${err.message}`);
    }
  },
};

const previousPeppersCheck = commaListCheck(pepperCheck, MAX_PREVIOUS_PEPPERS, "peppers");

/**
 * THE table of settings: every one Latchkey reads from its environment, with its bounds.
 * `loadConfig` reads them, `latchkey serve` takes each as a flag, its help lists them, and
 * docs/configuration.md's reference is written from it (`npm run docs:settings`; a unit test
 * fails while the page is out of date).
 */
export const SETTINGS = {
  port: documented(
    integer("PORT", 8080, 0, 65535, "main port: /v2 JSON, Connect, gRPC-web and gRPC"),
    "main port: /v2 JSON, Connect, gRPC-web and gRPC (HTTP/1.1 and cleartext HTTP/2 on one port)",
  ),
  grpcPort: documented(
    grpcPort,
    "gRPC only, over cleartext HTTP/2 (the fast gRPC door); `off` disables it, `0` picks a free port",
  ),
  host: documented(text("HOST", "0.0.0.0", "interface to bind"), "interface to bind"),
  adminPort: documented(
    integer(
      "ADMIN_PORT",
      9091,
      0,
      65535,
      "admin port: /metrics, /health/live and /health/ready (0 picks a free port)",
    ),
    "admin port: `GET /metrics` (Prometheus), `/health/live` and `/health/ready` (see [operations](operations.md#health)); `0` picks a free port. The main port does not serve `/metrics`",
  ),
  adminHost: documented(
    text("ADMIN_HOST", "127.0.0.1", "interface the admin port binds"),
    "interface the admin port binds: the loopback by default, so metrics are not on the internet; `0.0.0.0` where a scraper or a kubelet must reach it from outside (keep it off the public network)",
  ),
  workers: documented(
    workers,
    `server processes sharing the ports through \`node:cluster\` (\`auto\`: one per core available, at most ${MAX_WORKERS}); above \`1\` it needs \`DATABASE_URL\` (the embedded database belongs to one process) and \`REDIS_URL\` (rate limits counted in each process would not be exact), and the admin port is served by the primary process for all of them (see [operations](operations.md#one-machine-several-processes-workers))`,
  ),
  readyTimeoutMs: documented(
    integer(
      "READY_TIMEOUT_MS",
      2_000,
      50,
      60_000,
      "longest a readiness check waits for the database or Redis before calling it failing",
    ),
    "longest `/health/ready` (and gRPC health) waits for the database or Redis; a check still pending then counts as failing, so a hung database makes readiness 503 instead of hanging the probe",
  ),
  readyCacheMs: documented(
    integer(
      "READY_CACHE_MS",
      1_000,
      0,
      60_000,
      "how long a readiness result is reused, however often it is asked",
    ),
    "how long a readiness result is reused: however often probes ask, the database gets at most one readiness query per this period",
  ),
  databaseUrl: documented(
    optional("DATABASE_URL", "PostgreSQL URL; unset: embedded PGlite in DATA_DIR", {
      secret: true,
      check: checkDatabaseUrl,
      accepts: "a postgres:// or postgresql:// URL",
    }),
    "PostgreSQL 15+ URL (session pooling: LISTEN needs a session); unset means embedded PGlite",
  ),
  dataDir: documented(
    text("DATA_DIR", "./data", "PGlite directory (without DATABASE_URL), one process"),
    "PGlite directory when `DATABASE_URL` is unset; one process at a time (locked)",
  ),
  startupWaitS: documented(
    integer(
      "STARTUP_WAIT_S",
      30,
      0,
      3600,
      "seconds to keep retrying PostgreSQL and Redis at start while they come up",
    ),
    "how long a start (and the database commands) keeps retrying PostgreSQL and Redis while they come up (see [starting](deploying.md#starting))",
  ),
  redisUrl: documented(
    optional("REDIS_URL", "Redis for rate-limit counters; unset: in this process", {
      secret: true,
      check: checkRedisUrl,
      accepts: "a redis:// or rediss:// URL, or a socket path",
    }),
    "Redis for rate-limit counters (`redis://host:port`); unset: counters in the process, exact on one node only",
  ),
  rootKey: documented(
    optional("ROOT_KEY", "a root key with *.*.* held in memory (16+ characters)", {
      secret: true,
      check: rootKeyCheck,
      accepts: "16+ characters, no whitespace",
    }),
    "a root key with `*.*.*` in the default workspace, held in this process's memory only (at least 16 characters; nothing of it is stored, so give every node the same value; audit logs name it `rk_environment`); unset: the first start on an empty database creates a stored one (see [starting](deploying.md#starting))",
  ),
  bootstrapRootKeyFile: documented(
    optional(
      "BOOTSTRAP_ROOT_KEY_FILE",
      "where the first start writes its root key (mode 0600) when stdout is not a terminal",
      { shownDefault: "DATA_DIR/first-root-key" },
    ),
    "where that first start writes the created root key (mode 0600) when stdout is not a terminal",
  ),
  docsUrl: documented(
    optional("DOCS_URL", "absolute base of error type URLs", {
      check: docsUrlCheck,
      accepts: "an absolute http(s) URL",
    }),
    "absolute base of error `type` URLs: `<DOCS_URL>/api-reference/errors-v2/svc/<category>/<code>`; unset, the type is the relative reference `/api-reference/errors-v2/...` (this server's own error pages). Never taken from the request's `Host`",
  ),
  keyHashPepper: documented(
    optional("KEY_HASH_PEPPER", "server-side secret new key hashes are HMACs under", {
      secret: true,
      check: pepperCheck,
      accepts: `${MIN_PEPPER_LENGTH}+ characters, no whitespace or commas`,
    }),
    "keys and root keys created while it is set are stored as HMAC-SHA-256 under this server-side secret (32+ characters); older and migrated keys stay SHA-256 and keep verifying",
  ),
  keyHashPepperPrevious: documented(
    optional(
      "KEY_HASH_PEPPER_PREVIOUS",
      `up to ${MAX_PREVIOUS_PEPPERS} comma-separated former peppers still accepted`,
      {
        secret: true,
        check: previousPeppersCheck,
        accepts: `up to ${MAX_PREVIOUS_PEPPERS} peppers, comma-separated`,
      },
    ),
    "up to 4 comma-separated former peppers still accepted; a key found under one moves to the current pepper when it is used",
  ),
  githubSecretScanningPublicKeys: documented(
    githubSecretScanningPublicKeys,
    'turns on `POST /v2/secret-scanning/github`, the receiver of GitHub\'s secret-scanning partner programme (see [leak detection](leak-detection.md)), with the ECDSA P-256 keys its reports are signed with: PEM public keys (one or more `PUBLIC KEY` blocks; `\\n` is read as a line break; each key\'s identifier is the hex SHA-256 of its DER form), a key list\'s JSON (`{"public_keys": [{"key_identifier", "key"}]}`), or the http(s) URL of one (GitHub\'s is `https://api.github.com/meta/public_keys/secret_scanning`), fetched when first needed with a 5 s timeout and kept for an hour (fetched again early, at most every 5 minutes, for an identifier it does not hold); unset, the path answers 404',
  ),
  // A string, not the union: pino takes any level name, and tests set theirs.
  logLevel: documented(
    oneOf<string>(
      "LOG_LEVEL",
      ["trace", "debug", "info", "warn", "error", "fatal", "silent"],
      "info",
      "log level",
    ),
    "`trace`, `debug` (one line per call), `info`, `warn`, `error`, `fatal`, `silent`",
  ),
  verifyRequiresRootKey: documented(
    boolean("VERIFY_REQUIRES_ROOT_KEY", false, "keys.verifyKey requires a root key"),
    "`true` makes `keys.verifyKey` require a root key (401 without one, `apiId` or not); `false` lets it verify header-less, scoped to the `apiId` sent (or, on an instance of one workspace, to that workspace)",
  ),
  ...GATEWAY_SETTINGS,
  consoleSessionIdleS: documented(
    integer("CONSOLE_SESSION_IDLE_S", 1_800, 60, 86_400, "seconds a console session lives unused"),
    "seconds a web console session (`/console`) may go unused before it ends; each call with it moves the time on",
  ),
  consoleSessionMaxS: documented(
    integer(
      "CONSOLE_SESSION_MAX_S",
      43_200,
      300,
      2_592_000,
      "seconds a console session lives at most",
    ),
    "seconds a web console session lives at most from its sign-in, however much it is used; then the operator signs in again",
  ),
  consoleSessionsPerRootKey: documented(
    integer(
      "CONSOLE_SESSIONS_PER_ROOT_KEY",
      10,
      1,
      1_000,
      "console sessions one root key holds at most",
    ),
    "console sessions one root key holds at most; a sign-in beyond ends that root key's least recently used session",
  ),
  consoleSignInsPerMinute: documented(
    integer(
      "CONSOLE_SIGN_INS_PER_MINUTE",
      10,
      1,
      10_000,
      "console sign-in attempts per client address and minute",
    ),
    "console sign-in attempts one client address may make per minute on each process (further ones answer 429 before the root key is read); every process also takes at most 100 times as many from all addresses together",
  ),
  ratelimitFailureMode: documented(
    oneOf(
      "RATELIMIT_FAILURE_MODE",
      ["open", "closed"],
      "open",
      "what rate limits do while Redis is unreachable",
    ),
    "when Redis is unreachable: `open` admits (logged, counted in `latchkey_ratelimit_backend_failures_total`), `closed` answers 503 `service_unavailable`",
  ),
  cacheMaxEntries: documented(
    integer("CACHE_MAX_ENTRIES", 100_000, 1, 10_000_000, "entries per cache"),
    "entries per in-process cache (root keys, APIs, verification records)",
  ),
  cacheTtlMs: documented(
    integer("CACHE_TTL_MS", 10_000, 0, 30_000, "cache time to live"),
    "cache time to live, at most `30000` (changes propagate within 30 s even if a notification is lost)",
  ),
  eventBufferSize: documented(
    integer(
      "EVENT_BUFFER_SIZE",
      100_000,
      1,
      10_000_000,
      "verification events held in memory at most",
    ),
    "verification events held in memory at most; beyond, events are dropped and counted",
  ),
  eventBufferBytes: documented(
    integer(
      "EVENT_BUFFER_BYTES",
      67_108_864,
      1_048_576,
      17_179_869_184,
      "memory held for encoded events at most",
    ),
    "memory held for encoded events at most (64 MiB; from 1 MiB; counted in the 256 KiB chunks the rows are written into): a count alone would let a flood of events with 20 tags of 512 characters take gigabytes while the database is down; beyond, events are dropped and counted",
  ),
  eventFlushIntervalMs: documented(
    integer("EVENT_FLUSH_INTERVAL_MS", 1_000, 10, 60_000, "how often buffered events are written"),
    "how often buffered events are written; each write is spread over half of this (its statements leave at even intervals, so the database's work does not take the server's core in one burst), unless events are backing up",
  ),
  eventRetentionDays: documented(
    integer("EVENT_RETENTION_DAYS", 90, 1, 3650, "days analytics is kept"),
    "analytics older than this is removed from raw tables and rollups (checked hourly)",
  ),
  creditLedgerRetentionDays: documented(
    integer("CREDIT_LEDGER_RETENTION_DAYS", 400, 1, 3650, "days credit ledger entries are kept"),
    "credit ledger entries (the credit columns of `analytics.getCreditUsage`) older than this are deleted (checked hourly); longer than analytics by default, as statements are invoiced from",
  ),
  reservationTtlS: documented(
    integer("RESERVATION_TTL_S", 900, 1, 2_592_000, "seconds a credit reservation is held"),
    "seconds a credit reservation made by `keys.verifyKey` with `credits.reserve` is held; one not settled by then is settled in full (the amount reserved is kept) by a sweep that runs on every process",
  ),
  analyticsTimeoutMs: documented(
    integer("ANALYTICS_TIMEOUT_MS", 5_000, 100, 300_000, "longest an analytics query may run"),
    "longest an `analytics.getVerifications` query may run (both engines; on the embedded one the query is cancelled by restarting the database thread)",
  ),
  analyticsMaxRows: documented(
    integer("ANALYTICS_MAX_ROWS", 10_000, 1, 1_000_000, "most rows an analytics query may return"),
    "most rows an analytics query may return",
  ),
  databasePoolSize: documented(
    integer("DATABASE_POOL_SIZE", 10, 1, 1_000, "connections of the main PostgreSQL pool"),
    "connections of the main PostgreSQL pool",
  ),
  statementTimeoutMs: documented(
    integer(
      "STATEMENT_TIMEOUT_MS",
      10_000,
      0,
      3_600_000,
      "longest one statement may run (0: no bound)",
    ),
    "longest one statement of the main pool may run, lock waits included (`0`: none); past it 503, nothing changed",
  ),
  analyticsPoolSize: documented(
    integer("ANALYTICS_POOL_SIZE", 2, 1, 100, "connections of the analytics PostgreSQL pool"),
    "connections of the analytics pool, apart from the main one (PostgreSQL)",
  ),
  analyticsMaxConcurrentPerWorkspace: documented(
    integer(
      "ANALYTICS_MAX_CONCURRENT_PER_WORKSPACE",
      2,
      1,
      100,
      "analytics queries one workspace runs at once per node",
    ),
    "analytics queries one workspace runs at once per node; beyond, 429",
  ),
  migrateKeysMaxConcurrentPerWorkspace: documented(
    integer(
      "MIGRATE_KEYS_MAX_CONCURRENT_PER_WORKSPACE",
      1,
      1,
      100,
      "keys.migrateKeys calls one workspace runs at once per node",
    ),
    "`keys.migrateKeys` calls one workspace runs at once per node; beyond, 429",
  ),
  connectionIdleTimeoutMs: documented(
    integer(
      "CONNECTION_IDLE_TIMEOUT_MS",
      30_000,
      100,
      3_600_000,
      "an idle connection is closed after this",
    ),
    "a connection with no request in flight that sends nothing this long is closed (every port, the protocol sniffer too)",
  ),
  requestHeadersTimeoutMs: documented(
    integer(
      "REQUEST_HEADERS_TIMEOUT_MS",
      10_000,
      100,
      600_000,
      "longest a request may take to send its headers",
    ),
    "a request's headers (HTTP/2 and gRPC: preface and first HEADERS) must arrive within this; HTTP/1.1 gets 408",
  ),
  requestTimeoutMs: documented(
    integer(
      "REQUEST_TIMEOUT_MS",
      30_000,
      100,
      3_600_000,
      "longest a whole request may take to arrive",
    ),
    "a whole request, headers and body",
  ),
  maxConnections: documented(
    integer("MAX_CONNECTIONS", 10_000, 1, 1_000_000, "open connections per listening port"),
    "open connections per listening port; beyond, a new connection is closed at once",
  ),
  h2MaxConcurrentStreams: documented(
    integer("H2_MAX_CONCURRENT_STREAMS", 100, 1, 10_000, "streams per HTTP/2 or gRPC session"),
    "streams per HTTP/2 or gRPC session (header list 64 KiB and session memory 32 MB are fixed)",
  ),
  shutdownTimeoutMs: documented(
    integer(
      "SHUTDOWN_TIMEOUT_MS",
      10_000,
      0,
      600_000,
      "how long a stop waits for requests, then for event writes",
    ),
    "how long SIGTERM/SIGINT waits for in-flight requests, and then how long it keeps trying to write the buffered events while the database is unreachable",
  ),
  ...WEBHOOK_SETTINGS,
} as const satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;

/** Every setting's parsed value, by name. */
export type Settings = { [K in SettingName]: ReturnType<(typeof SETTINGS)[K]["parse"]> };

/** The `serve` flag of a setting, without dashes: `GRPC_PORT` → `grpc-port`. */
export function flagOf(setting: Setting<unknown>): string {
  return setting.env.toLowerCase().replaceAll("_", "-");
}
