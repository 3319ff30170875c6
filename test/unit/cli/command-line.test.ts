import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../../src/cli/command.js";
import { serveCommand, serveConfig } from "../../../src/cli/serve.js";
import { flagOf, SETTINGS, type SettingName } from "../../../src/config/settings.js";
import { KeyHashing } from "../../../src/domain/key-hashing.js";
import { SecretBox } from "../../../src/domain/webhooks/secret-box.js";
import { cli } from "../../cli/in-process.js";

// Parsing, help and refusals, in this process: none of these opens a database or a port.

const VERSION = JSON.parse(
  readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
).version;

/** A directory no command can create: a command that opened its database here would fail. */
const NO_DATABASE = { DATA_DIR: "/dev/null/latchkey-no-database" };

describe("the latchkey command line", () => {
  it.each([[["--help"]], [["-h"]], [["help"]], [[]]])(
    "%j prints the usage, exit 0",
    async (args) => {
      const r = await cli(args);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(
        /^latchkey: an API key management service\n\nUsage: latchkey <command>/,
      );
      for (const command of [
        "serve",
        "migrate",
        "workspace create",
        "workspace list",
        "root-key create",
        "root-key list",
        "root-key revoke",
      ])
        expect(r.stdout).toContain(`\n  ${command} `);
    },
  );

  it.each([
    [["help", "root-key", "create"], "Usage: latchkey root-key create --workspace ID"],
    [["root-key", "create", "--help"], "Usage: latchkey root-key create --workspace ID"],
    [["help", "serve"], "Usage: latchkey serve [options]"],
    [["serve", "-h"], "Usage: latchkey serve [options]"],
    [["help", "root-key"], "Usage: latchkey root-key <create|list|revoke> [options]"],
    [["workspace", "--help"], "Usage: latchkey workspace <create|list> [options]"],
    [["root-key", "revoke", "--help"], "Usage: latchkey root-key revoke ID [options]"],
  ])("%j prints that command's help, exit 0", async (args, usage) => {
    const r = await cli(args);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(usage)).toBe(true);
  });

  it("--version prints the package's version", async () => {
    expect(await cli(["--version"])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  });

  it.each([
    [["frobnicate"], "unknown command 'frobnicate'"],
    [["serv"], "unknown command 'serv'; did you mean serve?"],
    [["--frobnicate"], "unknown option '--frobnicate'"],
    [
      ["serve", "--prot", "1"],
      "unknown option '--prot' for 'latchkey serve'; did you mean --port?",
    ],
    [["serve", "extra"], "unexpected argument 'extra'"],
    [["root-key", "lsit"], "has no subcommand 'lsit'; did you mean list?"],
    [["root-key"], "'latchkey root-key' needs a subcommand"],
    [["root-key", "list", "--permission", "x"], "unknown option '--permission'"],
    [["root-key", "revoke", "rk_1", "rk_2"], "unexpected argument 'rk_2'"],
    [["help", "frobnicate"], "unknown command 'frobnicate'"],
    [["serve", "--port"], "latchkey serve: Option '--port <value>' argument missing"],
    [["workspace", "list", "--all"], "unknown option '--all' for 'latchkey workspace list'"],
  ])("%j exits 2 with one line naming the mistake", async (args, message) => {
    const r = await cli(args, NO_DATABASE);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^latchkey: [^\n]+\n$/);
    expect(r.stderr).toContain(message);
  });

  it("serve --help lists every setting as a flag with its variable and default", async () => {
    const help = (await cli(["serve", "--help"])).stdout;
    for (const s of Object.values(SETTINGS)) {
      const flag = `--${flagOf(s)}`;
      const at = help.indexOf(`  ${flag} VALUE\n`);
      expect(at, flag).toBeGreaterThan(-1);
      const entry = help.slice(at, help.indexOf("\n  --", at + 1));
      expect(entry, flag).toContain(`[${s.env}, default ${s.shownDefault}`);
    }
  });
});

/** A valid value of each setting, other than its default. */
const SAMPLES: Record<SettingName, string> = {
  port: "8081",
  grpcPort: "off",
  host: "127.0.0.2",
  adminPort: "9191",
  adminHost: "0.0.0.0",
  workers: "3",
  readyTimeoutMs: "500",
  readyCacheMs: "250",
  databaseUrl: "postgres://u:pw@db.internal:5433/latchkey",
  dataDir: "/var/lib/latchkey",
  startupWaitS: "5",
  redisUrl: "redis://cache:6380/1",
  rootKey: "root_from_the_flag_0123456789",
  bootstrapRootKeyFile: "/run/latchkey/first-root-key",
  docsUrl: "https://docs.example.com",
  keyHashPepper: "pepper_from_the_flag_0123456789abcdef",
  keyHashPepperPrevious: "previous_pepper_0123456789abcdefghij",
  githubSecretScanningPublicKeys: "https://keys.example.com/secret_scanning",
  logLevel: "warn",
  verifyRequiresRootKey: "true",
  ratelimitFailureMode: "closed",
  trustedProxies: "10.0.0.0/8, 2001:db8::/32,192.0.2.1",
  gatewayKeyHeader: "X-Acme-Key",
  consoleSessionIdleS: "600",
  consoleSessionMaxS: "3600",
  consoleSessionsPerRootKey: "3",
  consoleSignInsPerMinute: "5",
  cacheMaxEntries: "500",
  cacheTtlMs: "2000",
  eventBufferSize: "1000",
  eventBufferBytes: "2097152",
  eventFlushIntervalMs: "250",
  eventRetentionDays: "30",
  creditLedgerRetentionDays: "365",
  reservationTtlS: "60",
  analyticsTimeoutMs: "1000",
  analyticsMaxRows: "100",
  databasePoolSize: "4",
  statementTimeoutMs: "2000",
  analyticsPoolSize: "3",
  analyticsMaxConcurrentPerWorkspace: "4",
  migrateKeysMaxConcurrentPerWorkspace: "2",
  connectionIdleTimeoutMs: "5000",
  requestHeadersTimeoutMs: "4000",
  requestTimeoutMs: "8000",
  maxConnections: "100",
  h2MaxConcurrentStreams: "50",
  shutdownTimeoutMs: "3000",
  webhookRetryBaseMs: "1000",
  webhookRetryWindowMs: "3600000",
  webhookDisableAfterMs: "86400000",
  webhookAllowPrivate: "true",
  webhookConnectTimeoutMs: "2000",
  webhookTimeoutMs: "4000",
  webhookConcurrency: "8",
  webhookEndpointConcurrency: "2",
  webhookWorkspaceConcurrency: "3",
  webhookPollIntervalMs: "500",
  webhookDeliveryRetentionDays: "7",
  webhookSecretsKey: "secrets_key_from_the_flag_0123456789",
  webhookSecretsKeyPrevious: "previous_secrets_key_0123456789abcdef",
};

describe("serve's settings", () => {
  it("takes every setting as a flag, and a flag beats its variable", () => {
    // Every variable is set to a value no setting accepts: the configuration loads only if
    // each flag was read instead of its variable.
    const env = Object.fromEntries(Object.values(SETTINGS).map((s) => [s.env, "%not valid%"]));
    const args = Object.entries(SAMPLES).flatMap(([name, value]) => [
      `--${flagOf(SETTINGS[name as SettingName])}`,
      value,
    ]);
    const config = serveConfig(parseCommand(serveCommand, args).values, env) as Record<
      string,
      unknown
    >;
    for (const [name, value] of Object.entries(SAMPLES)) {
      if (name === "keyHashPepper" || name === "keyHashPepperPrevious") continue;
      if (name === "webhookSecretsKey" || name === "webhookSecretsKeyPrevious") continue;
      expect(config[name], name).toEqual(SETTINGS[name as SettingName].parse(value, name));
    }
    const peppers = new KeyHashing(SAMPLES.keyHashPepper, [SAMPLES.keyHashPepperPrevious]);
    expect((config.keyHashing as KeyHashing).candidates("secret", "plain")).toEqual(
      peppers.candidates("secret", "plain"),
    );
    const box = new SecretBox(SAMPLES.webhookSecretsKey, [SAMPLES.webhookSecretsKeyPrevious]);
    expect((config.webhookSecrets as SecretBox).keyIds).toEqual(box.keyIds);
  });

  it("names the flag, not the variable, when a flag's value is refused", async () => {
    const r = await cli(["serve", "--port", "99999"], { PORT: "8080" });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("latchkey: --port=99999: must be an integer from 0 to 65535\n");
  });

  it.each([
    [{ PORT: "abc" }, "PORT=abc: must be an integer from 0 to 65535"],
    [{ GRPC_PORT: "nine" }, "GRPC_PORT=nine"],
    [
      { REQUEST_HEADERS_TIMEOUT_MS: "40000" },
      "REQUEST_HEADERS_TIMEOUT_MS=40000: must not exceed REQUEST_TIMEOUT_MS",
    ],
    [{ KEY_HASH_PEPPER: "short" }, "KEY_HASH_PEPPER: a pepper must be"],
    [{ WEBHOOK_SECRETS_KEY: "short" }, "WEBHOOK_SECRETS_KEY: must be at least 32 characters"],
    [{ WEBHOOK_RETRY_BASE_MS: "1" }, "WEBHOOK_RETRY_BASE_MS=1: must be an integer from 10"],
    [{ STARTUP_WAIT_S: "-1" }, "STARTUP_WAIT_S=-1"],
    [{ WORKERS: "0" }, "WORKERS=0: must be an integer from 1 to 64, or auto"],
    [
      { GITHUB_SECRET_SCANNING_PUBLIC_KEYS: "not a key" },
      "GITHUB_SECRET_SCANNING_PUBLIC_KEYS: no PEM 'PUBLIC KEY' block",
    ],
    [{ WORKERS: "65" }, "WORKERS=65: must be an integer from 1 to 64, or auto"],
    [
      { TRUSTED_PROXIES: "127.0.0.1, 10.0.0.1/8" },
      "TRUSTED_PROXIES: '10.0.0.1/8' has host bits set after the /8 prefix: did you mean 10.0.0.0/8?",
    ],
    [{ GATEWAY_KEY_HEADER: "x key" }, "GATEWAY_KEY_HEADER=x key: must be an HTTP header name"],
  ])("a bad setting %j: one line, exit 2, nothing started", async (env, message) => {
    const r = await cli(["serve"], { ...NO_DATABASE, ...env });
    expect(r).toEqual({ code: 2, stdout: "", stderr: expect.stringMatching(/^[^\n]+\n$/) });
    expect(r.stderr).toContain(`latchkey: ${message}`);
  });

  it.each([
    "postgres://latchkey:s3cret-pw@db.internal:notaport/latchkey",
    "postgres://latchkey:s3cret-pw@[db.internal/latchkey",
    "postgress://latchkey:s3cret-pw@db.internal/latchkey",
    "latchkey:s3cret-pw@db.internal/latchkey",
    "postgres://latchkey:s3c@ret-pw@db.internal/latchkey",
    "postgres://latchkey:12/s3cret-pw@db.internal/latchkey",
    "postgres://latchkey:s3cret-pw%zz@db.internal/latchkey",
  ])("a malformed DATABASE_URL (%s) never shows its password", async (url) => {
    for (const r of [
      await cli(["serve"], { DATABASE_URL: url }),
      await cli(["serve", "--database-url", url]),
      await cli(["root-key", "list"], { DATABASE_URL: url }),
      await cli(["migrate", "--database-url", url]),
    ]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(
        /^latchkey: (DATABASE_URL|--database-url): not a PostgreSQL URL[^\n]+\n$/,
      );
      expect(r.stderr).not.toContain("s3c");
    }
  });
});

describe("root-key create refuses before it opens the database", () => {
  it.each([
    [["--permission", "not-a-permission"], /resource\.id\.action/],
    [
      ["--permission", "api.*.read_ap"],
      /^latchkey: permission 'api\.\*\.read_ap' names no action the server checks; did you mean api\.\*\.read_api\?\n$/,
    ],
    [
      ["--permissions", "api.*.read_api,apis.*.create_api"],
      /'apis\.\*\.create_api' names no resource the server checks; did you mean api\.\*\.create_api\?/,
    ],
    [
      ["--permission", "rbac.role_1.create_role"],
      /rbac permissions are workspace-wide \(id \*\); did you mean rbac\.\*\.create_role\?/,
    ],
    [[], /give --permission P \(repeatable\) or --all/],
    [["--all", "--permission", "api.*.read_api"], /not both/],
  ])("%j: exit 2, one line", async (args, message) => {
    const r = await cli(["root-key", "create", "--workspace", "ws_x", ...args], NO_DATABASE);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
    expect(r.stderr.split("\n")).toHaveLength(2);
  });

  it("needs --workspace", async () => {
    const r = await cli(["root-key", "create", "--all"], NO_DATABASE);
    expect(r).toEqual({ code: 2, stdout: "", stderr: "latchkey: --workspace is required\n" });
  });
});
