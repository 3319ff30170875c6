import { join } from "node:path";
import { ConfigError } from "./config/parsers.js";
import { flagOf, SETTINGS, type SettingName, type Settings } from "./config/settings.js";
import { KeyHashing } from "./domain/key-hashing.js";
import { SecretBox } from "./domain/webhooks/secret-box.js";

export { ConfigError } from "./config/parsers.js";

/**
 * Everything Latchkey reads from its environment, parsed and checked once at start: each
 * setting of the table in `config/settings.ts` (see its help there and docs/configuration.md),
 * with the peppers made into `keyHashing`, and the fixed bounds.
 */
export type Config = Omit<
  Settings,
  | "keyHashPepper"
  | "keyHashPepperPrevious"
  | "bootstrapRootKeyFile"
  | "webhookSecretsKey"
  | "webhookSecretsKeyPrevious"
> & {
  /** How webhook signing secrets are stored (WEBHOOK_SECRETS_KEY and its former values). */
  webhookSecrets: SecretBox;
  /** How key secrets are stored and found (KEY_HASH_PEPPER, KEY_HASH_PEPPER_PREVIOUS). */
  keyHashing: KeyHashing;
  /** Where a first start writes its root key when stdout is not a terminal. */
  bootstrapRootKeyFile: string;
  /** Largest request body on every door. */
  maxBodyBytes: number;
};

type Env = Record<string, string | undefined>;

/** Values given as `serve` flags, by setting name; they take precedence over the environment. */
export type ConfigFlags = Partial<Record<SettingName, string>>;

/**
 * Reads the configuration from the environment and the flags (a flag beats its variable).
 * A bad value throws a ConfigError naming where it came from: `PORT=x` or `--port=x`.
 */
export function loadConfig(env: Env = process.env, flags: ConfigFlags = {}): Config {
  const labels = {} as Record<SettingName, string>;
  const values = {} as Record<SettingName, unknown>;
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const setting = SETTINGS[name];
    const fromFlag = flags[name] !== undefined;
    labels[name] = fromFlag ? `--${flagOf(setting)}` : setting.env;
    values[name] = setting.parse(fromFlag ? flags[name] : env[setting.env], labels[name]);
  }
  const s = values as Settings;
  // The headers are part of the request: a longer headers timeout could never apply.
  if (s.requestHeadersTimeoutMs > s.requestTimeoutMs) {
    throw new ConfigError(
      `${labels.requestHeadersTimeoutMs}=${s.requestHeadersTimeoutMs}: must not exceed ${labels.requestTimeoutMs} (${s.requestTimeoutMs})`,
    );
  }
  const {
    keyHashPepper,
    keyHashPepperPrevious,
    bootstrapRootKeyFile,
    webhookSecretsKey,
    webhookSecretsKeyPrevious,
    ...rest
  } = s;
  return {
    ...rest,
    webhookSecrets: new SecretBox(webhookSecretsKey, webhookSecretsKeyPrevious?.split(",") ?? []),
    keyHashing: new KeyHashing(keyHashPepper, keyHashPepperPrevious?.split(",") ?? []),
    bootstrapRootKeyFile: bootstrapRootKeyFile ?? join(s.dataDir, "first-root-key"),
    maxBodyBytes: 1024 * 1024,
  };
}
