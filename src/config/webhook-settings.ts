import { MIN_SECRETS_KEY_LENGTH } from "../domain/webhooks/secret-box.js";
import { boolean, ConfigError, commaListCheck, documented, integer, optional } from "./parsers.js";

/** A key that encrypts signing secrets never appears in an error: only the variable. */
function secretsKeyCheck(key: string, label: string): string {
  if (key.length < MIN_SECRETS_KEY_LENGTH || /[\s,]/.test(key)) {
    throw new ConfigError(
      `${label}: must be at least ${MIN_SECRETS_KEY_LENGTH} characters, without whitespace or commas`,
    );
  }
  return key;
}

const previousKeysCheck = commaListCheck(secretsKeyCheck, 4, "keys");

/** The settings of webhook deliveries, a part of the table in settings.ts. */
export const WEBHOOK_SETTINGS = {
  webhookRetryBaseMs: documented(
    integer("WEBHOOK_RETRY_BASE_MS", 5_000, 10, 3_600_000, "wait before a delivery's first retry"),
    "wait before a failed delivery's first retry; each further retry waits twice as long, at most an hour, less a jitter of up to a fifth",
  ),
  webhookRetryWindowMs: documented(
    integer(
      "WEBHOOK_RETRY_WINDOW_MS",
      86_400_000,
      1_000,
      604_800_000,
      "how long after an event its delivery is retried",
    ),
    "how long after its event a delivery is retried; then it is marked failed (`webhooks.redeliver` can send it again)",
  ),
  webhookDisableAfterMs: documented(
    integer(
      "WEBHOOK_DISABLE_AFTER_MS",
      432_000_000,
      60_000,
      2_592_000_000,
      "an endpoint failing every attempt this long is disabled",
    ),
    "an endpoint whose every attempt has failed for this long (5 days by default) is disabled, its pending deliveries marked failed, and an audit record `webhook.disable` written",
  ),
  webhookAllowPrivate: documented(
    boolean(
      "WEBHOOK_ALLOW_PRIVATE",
      false,
      "webhooks may reach private, loopback and link-local addresses",
    ),
    "lets endpoints point at private, loopback and link-local addresses (tests and closed networks); off, such URLs are refused at creation and every resolved address is checked before connecting",
  ),
  webhookConnectTimeoutMs: documented(
    integer(
      "WEBHOOK_CONNECT_TIMEOUT_MS",
      5_000,
      10,
      60_000,
      "longest a delivery's connect may take",
    ),
    "longest resolving and connecting to a receiver may take",
  ),
  webhookTimeoutMs: documented(
    integer("WEBHOOK_TIMEOUT_MS", 10_000, 10, 120_000, "longest a whole delivery attempt may take"),
    "longest a whole delivery attempt may take, from connecting to the end of the answer (whose body is read up to 64 KiB and discarded)",
  ),
  webhookConcurrency: documented(
    integer("WEBHOOK_CONCURRENCY", 32, 1, 1_000, "delivery attempts one node makes at once"),
    "delivery attempts one node makes at once",
  ),
  webhookEndpointConcurrency: documented(
    integer(
      "WEBHOOK_ENDPOINT_CONCURRENCY",
      4,
      1,
      100,
      "delivery attempts to one endpoint one node makes at once",
    ),
    "delivery attempts to one endpoint one node makes at once",
  ),
  webhookWorkspaceConcurrency: documented(
    integer(
      "WEBHOOK_WORKSPACE_CONCURRENCY",
      8,
      1,
      1_000,
      "delivery attempts for one workspace one node makes at once",
    ),
    "delivery attempts for one workspace one node makes at once, so that one tenant's slow receivers leave room for the others",
  ),
  webhookPollIntervalMs: documented(
    integer(
      "WEBHOOK_POLL_INTERVAL_MS",
      1_000,
      10,
      60_000,
      "how often a node looks for due deliveries and events",
    ),
    "how often each node looks for due deliveries (a change made on the node wakes it at once) and derives credit events; the key expiry pass runs every 15 s at most",
  ),
  webhookDeliveryRetentionDays: documented(
    integer(
      "WEBHOOK_DELIVERY_RETENTION_DAYS",
      30,
      1,
      3650,
      "days finished deliveries and their attempts are kept",
    ),
    "delivered and failed deliveries older than this are deleted with their attempts (checked hourly)",
  ),
  webhookSecretsKey: documented(
    optional("WEBHOOK_SECRETS_KEY", "key the stored webhook signing secrets are encrypted under", {
      secret: true,
      check: secretsKeyCheck,
      accepts: `${MIN_SECRETS_KEY_LENGTH}+ characters, no whitespace or commas`,
    }),
    "signing secrets created or rotated while it is set are stored encrypted (AES-256-GCM) under a key derived from it; keep it apart from the database (see [security](security.md#webhook-signing-secrets))",
  ),
  webhookSecretsKeyPrevious: documented(
    optional(
      "WEBHOOK_SECRETS_KEY_PREVIOUS",
      "up to 4 comma-separated former WEBHOOK_SECRETS_KEY values still read",
      { secret: true, check: previousKeysCheck, accepts: "up to 4 keys, comma-separated" },
    ),
    "up to 4 comma-separated former keys, still used to read the secrets stored under them",
  ),
} as const;
