import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { flagOf, SETTINGS } from "../../src/config/settings.js";
import { settingsReference, withReference } from "../../src/config/settings-reference.js";
import { describeDatabaseUrl } from "../../src/config/urls.js";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("loadConfig", () => {
  it("takes each setting from a flag before its variable, and names the flag in an error", () => {
    const env = { PORT: "8081", DATA_DIR: "/from/env", GRPC_PORT: "9091" };
    const config = loadConfig(env, { port: "8082", grpcPort: "off" });
    expect(config.port).toBe(8082);
    expect(config.grpcPort).toBeUndefined();
    expect(config.dataDir).toBe("/from/env");
    expect(() => loadConfig(env, { port: "x" })).toThrow(
      new ConfigError("--port=x: must be an integer from 0 to 65535"),
    );
    expect(() => loadConfig({ PORT: "x" })).toThrow(
      new ConfigError("PORT=x: must be an integer from 0 to 65535"),
    );
  });

  it("names the flags of a cross-check by where each value came from", () => {
    expect(() =>
      loadConfig({ REQUEST_TIMEOUT_MS: "5000" }, { requestHeadersTimeoutMs: "6000" }),
    ).toThrow("--request-headers-timeout-ms=6000: must not exceed REQUEST_TIMEOUT_MS (5000)");
  });

  it("puts the first root key's file in the data directory unless told otherwise", () => {
    expect(loadConfig({ DATA_DIR: "/var/lib/latchkey" }).bootstrapRootKeyFile).toBe(
      "/var/lib/latchkey/first-root-key",
    );
    expect(loadConfig({ BOOTSTRAP_ROOT_KEY_FILE: "/run/key" }).bootstrapRootKeyFile).toBe(
      "/run/key",
    );
  });

  it("reads WORKERS: 1 by default, auto as the cores available (at most 64), bounded", () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ WORKERS: "4" }).workers).toBe(4);
    expect(loadConfig({ WORKERS: "auto" }).workers).toBe(Math.min(availableParallelism(), 64));
    expect(() => loadConfig({}, { workers: "65" })).toThrow(
      new ConfigError("--workers=65: must be an integer from 1 to 64, or auto"),
    );
    expect(() => loadConfig({ WORKERS: "two" })).toThrow(
      new ConfigError("WORKERS=two: must be an integer from 1 to 64, or auto"),
    );
  });

  it("bounds STARTUP_WAIT_S", () => {
    expect(loadConfig({}).startupWaitS).toBe(30);
    expect(loadConfig({ STARTUP_WAIT_S: "0" }).startupWaitS).toBe(0);
    expect(() => loadConfig({ STARTUP_WAIT_S: "3601" })).toThrow(ConfigError);
  });

  it.each([
    ["postgres://u:pw@h1:5432,h2:5433/db", true],
    ["postgresql://localhost/db?sslmode=require", true],
    ["postgres://u:p%40ss@db/x", true],
    ["postgres://u:s3cret@db:port/x", false],
    ["mysql://u:s3cret@db/x", false],
    ["u:s3cret@db/x", false],
    // A password's @ / ? # % unencoded: postgres.js would connect to a piece of the password
    // as a host (naming it in its errors and our logs) or throw while decoding it.
    ["postgres://u:p@s3cret@127.0.0.1:5432/x", false],
    ["postgres://u:12/s3cret@127.0.0.1:5432/x", false],
    ["postgres://u:1?s3cret@127.0.0.1:5432/x", false],
    ["postgres://u:1#s3cret@127.0.0.1:5432/x", false],
    ["postgres://u:s3cret%zz@127.0.0.1:5432/x", false],
    ["postgres://u%zz:s3cret@127.0.0.1:5432/x", false],
  ])("DATABASE_URL %s is accepted: %s; a refusal never shows it", (url, ok) => {
    if (ok) expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    else {
      expect(() => loadConfig({ DATABASE_URL: url })).toThrow(
        /^DATABASE_URL: not a PostgreSQL URL/,
      );
      expect(() => loadConfig({ DATABASE_URL: url })).not.toThrow(/s3cret/);
    }
  });

  it("refuses a REDIS_URL that is no Redis URL, without showing it", () => {
    expect(loadConfig({ REDIS_URL: "rediss://:pw@cache:6380/2" }).redisUrl).toBe(
      "rediss://:pw@cache:6380/2",
    );
    expect(() => loadConfig({ REDIS_URL: "cache:s3cret@6379" })).toThrow(
      /^REDIS_URL: not a Redis URL/,
    );
    expect(() => loadConfig({ REDIS_URL: "cache:s3cret@6379" })).not.toThrow(/s3cret/);
    // ioredis throws while decoding a bad escape in the password: refused here instead.
    expect(() => loadConfig({ REDIS_URL: "redis://:s3cret%zz@cache:6379" })).toThrow(
      /^REDIS_URL: not a Redis URL/,
    );
    expect(() => loadConfig({ REDIS_URL: "redis://:s3cret%zz@cache:6379" })).not.toThrow(/s3cret/);
  });

  it("describes a PostgreSQL URL by its hosts and database only", () => {
    expect(describeDatabaseUrl("postgres://u:p%40ss@h1:5432,h2:5433/db")).toBe(
      "h1:5432,h2:5433/db",
    );
    expect(describeDatabaseUrl("postgres://u:p@s3cret@127.0.0.1:5432/x")).not.toContain("s3cret");
  });
});

describe("the settings table", () => {
  it("is the reference in docs/configuration.md, a row per setting (npm run docs:settings)", () => {
    const page = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    const section = settingsReference();
    expect(withReference(page, section), "the reference's markers").toBeDefined();
    expect(withReference(page, section), "run npm run docs:settings").toBe(page);
    for (const s of Object.values(SETTINGS)) expect(section).toContain(`| \`${s.env}\` |`);
  });

  it("derives one flag per setting, none twice", () => {
    const flags = Object.values(SETTINGS).map(flagOf);
    expect(new Set(flags).size).toBe(flags.length);
    expect(flags).toContain("grpc-port");
    expect(flags).toContain("startup-wait-s");
  });
});
