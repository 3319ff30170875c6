import type { Config } from "../config.js";
import { nextRetryAt, shouldDisable } from "../domain/webhooks/retries.js";
import { signDelivery } from "../domain/webhooks/signature.js";
import type { Deps } from "../services/deps.js";
import { mutateAs } from "../services/mutation.js";
import type { ClaimedDelivery } from "../storage/queries/webhook-claims.js";
import type { AttemptRow } from "../storage/queries/webhook-deliveries.js";
import { deliveryRecordAttempt } from "../storage/queries/webhook-deliveries.js";
import {
  endpointAnswered,
  endpointDisable,
  endpointFailed,
} from "../storage/queries/webhook-endpoints.js";
import { sendDelivery } from "./sender.js";

/** What an attempt needs. */
export type AttemptDeps = Pick<Deps, "db" | "bus" | "clock" | "log" | "metrics"> & {
  config: Pick<
    Config,
    | "webhookSecrets"
    | "webhookRetryBaseMs"
    | "webhookRetryWindowMs"
    | "webhookDisableAfterMs"
    | "webhookConnectTimeoutMs"
    | "webhookTimeoutMs"
    | "webhookAllowPrivate"
  >;
};

/** The secrets a delivery is signed under now: the current one, and the previous in its grace. */
function signingSecrets(deps: AttemptDeps, d: ClaimedDelivery, now: number): string[] {
  const box = deps.config.webhookSecrets;
  const secrets = [box.open(d.secret)];
  if (d.previousSecret && d.previousSecretExpiresAt !== null && d.previousSecretExpiresAt > now)
    secrets.push(box.open(d.previousSecret));
  return secrets;
}

/** Sends a claimed delivery once and records the attempt; never throws. */
export async function attemptDelivery(deps: AttemptDeps, d: ClaimedDelivery): Promise<void> {
  const at = deps.clock.now();
  if (!d.enabled) {
    const error = "not sent: the endpoint is disabled";
    const given = {
      at,
      status: "error",
      responseStatus: null,
      latencyMs: 0,
      error,
      nextRetryAt: null,
    } as const;
    await deliveryRecordAttempt(deps.db, d.id, given).catch((err: unknown) =>
      deps.log.warn({ err, deliveryId: d.id }, "recording a webhook attempt failed"),
    );
    return;
  }
  const started = performance.now();
  let result: { status: number } | { error: string };
  try {
    const headers = signDelivery(d.id, at, d.payload, signingSecrets(deps, d, at));
    result = await sendDelivery(d.url, { ...headers }, d.payload, {
      connectTimeoutMs: deps.config.webhookConnectTimeoutMs,
      timeoutMs: deps.config.webhookTimeoutMs,
      allowPrivate: deps.config.webhookAllowPrivate,
    });
  } catch (err) {
    // A secret no configured key can open: nothing can be sent until the key is back.
    deps.log.warn({ err, endpointId: d.endpointId }, "a webhook secret could not be read");
    result = { error: "the signing secret could not be read (WEBHOOK_SECRETS_KEY)" };
  }
  const latencyMs = Math.round(performance.now() - started);
  const delivered = "status" in result && result.status >= 200 && result.status < 300;
  const attempt: AttemptRow = delivered
    ? {
        at,
        status: "delivered",
        responseStatus: (result as { status: number }).status,
        latencyMs,
        error: null,
        nextRetryAt: null,
      }
    : {
        at,
        status: "status" in result ? "failed" : "error",
        responseStatus: "status" in result ? result.status : null,
        latencyMs,
        error: "status" in result ? failureText(result.status) : result.error,
        nextRetryAt:
          nextRetryAt(
            { baseMs: deps.config.webhookRetryBaseMs, windowMs: deps.config.webhookRetryWindowMs },
            d.attempts,
            d.retryFrom,
            at,
            Math.random(),
          ) ?? null,
      };
  deps.metrics.webhookAttempts.inc({ outcome: attempt.status });
  try {
    await record(deps, d, attempt);
  } catch (err) {
    // The lease runs out and the delivery is tried again: at least once, never lost.
    deps.log.warn({ err, deliveryId: d.id }, "recording a webhook attempt failed");
  }
}

function failureText(status: number): string {
  return status >= 300 && status < 400
    ? `answered ${status} (redirects are not followed)`
    : `answered ${status}`;
}

/**
 * Stores the attempt and what follows from it: the endpoint answers again (its failure record
 * cleared), or it failed, and one failing every attempt for WEBHOOK_DISABLE_AFTER_MS is
 * disabled with an audit record.
 */
async function record(deps: AttemptDeps, d: ClaimedDelivery, a: AttemptRow): Promise<void> {
  const actor = {
    type: "system" as const,
    id: "webhooks",
    workspaceId: d.workspaceId,
    requestId: null,
  };
  await mutateAs(deps, actor, async (tx, change) => {
    if (a.status === "delivered") {
      await deliveryRecordAttempt(tx, d.id, a);
      await endpointAnswered(tx, d.endpointId);
      return;
    }
    // The endpoint's row first: a disabling (by Latchkey or by hand) and this record take
    // turns on it, so an attempt that ends after its endpoint was disabled is given up too.
    const failing = await endpointFailed(tx, d.endpointId, a.at);
    await deliveryRecordAttempt(tx, d.id, failing?.enabled ? a : { ...a, nextRetryAt: null });
    if (!failing?.enabled) return;
    if (!shouldDisable(failing.failingSince, a.at, deps.config.webhookDisableAfterMs)) return;
    const days = Math.floor((a.at - failing.failingSince) / 86_400_000);
    const reason = `every attempt failed since ${new Date(failing.failingSince).toISOString()} (${days} days)`;
    await endpointDisable(tx, d.endpointId, reason, a.at);
    deps.metrics.webhookEndpointsDisabled.inc();
    change.audit({
      event: "webhook.disable",
      resourceType: "webhook",
      resourceId: d.endpointId,
      description: `Disabled webhook endpoint ${d.endpointId}: ${reason}.`,
    });
    change.invalidate({ kind: "webhooks", workspaceId: d.workspaceId });
  });
}
