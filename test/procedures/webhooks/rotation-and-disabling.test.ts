import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { SecretBox } from "../../../src/domain/webhooks/secret-box.js";
import { useServer } from "../../harness/server.js";
import { eventually, type Receiver, startReceiver } from "../../harness/webhook-receiver.js";

// Secret rotation (a delivery carries a signature under each valid secret, each verifying
// with standardwebhooks on its own) and the disabling of an endpoint that fails for days.

const DAY = 86_400_000;
const s = useServer({
  config: {
    webhookAllowPrivate: true,
    webhookPollIntervalMs: 20,
    webhookRetryBaseMs: 1_000,
    webhookRetryWindowMs: DAY,
    webhookDisableAfterMs: 3 * DAY,
    webhookSecrets: new SecretBox("a_test_secrets_key_0123456789abcdefgh"),
  },
});
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  // An endpoint left behind would fail for days too as the next test moves the clock.
  const rows = await s.db.query<{ id: string }>("select id from webhook_endpoints");
  for (const r of rows) await s.api.webhooks.deleteEndpoint({ endpointId: r.id });
});

function headersOf(got: { headers: Record<string, unknown> }) {
  return {
    "webhook-id": got.headers["webhook-id"] as string,
    "webhook-timestamp": got.headers["webhook-timestamp"] as string,
    "webhook-signature": got.headers["webhook-signature"] as string,
  };
}

describe("secret rotation", () => {
  it("signs under the new and the previous secret during the grace, then under the new only", async () => {
    const r = await startReceiver();
    receivers.push(r);
    const made = await s.api.webhooks.createEndpoint({ url: r.url, eventTypes: ["key.created"] });
    const endpointId = made.data?.endpoint?.id as string;
    const old = made.data?.secret as string;
    const rotated = await s.api.webhooks.rotateSecret({
      endpointId,
      previousSecretExpiresInMs: 60_000n,
    });
    const fresh = rotated.data?.secret as string;
    expect(fresh).not.toBe(old);
    expect(Number(rotated.data?.previousSecretExpiresAt)).toBe(s.clock.now() + 60_000);
    await s.seed.key();
    const [got] = await r.waitFor(1);
    const h = headersOf(got as never);
    expect(h["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [old, fresh])
      expect(() => new Webhook(secret).verify(got?.body as string, h)).not.toThrow();
    // The stored secrets are sealed under WEBHOOK_SECRETS_KEY: neither appears in the row.
    const [row] = await s.db.query<{ secret: string; previous_secret: string }>(
      "select secret, previous_secret from webhook_endpoints where id = $1",
      [endpointId],
    );
    expect(row?.secret).toMatch(/^aes-256-gcm:/);
    expect(JSON.stringify(row)).not.toContain(fresh.slice(6));
    expect(JSON.stringify(row)).not.toContain(old.slice(6));
    // After the grace, the previous secret no longer signs.
    s.clock.advance(60_001);
    await s.seed.key();
    const [, later] = await r.waitFor(2);
    const h2 = headersOf(later as never);
    expect(h2["webhook-signature"].split(" ")).toHaveLength(1);
    expect(() => new Webhook(fresh).verify(later?.body as string, h2)).not.toThrow();
    expect(() => new Webhook(old).verify(later?.body as string, h2)).toThrow();
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where resource_id = $1 order by id",
      [endpointId],
    );
    expect(audit.map((a) => a.event)).toEqual(["webhook.create", "webhook.rotate_secret"]);
  });
});

describe("disabling", () => {
  it("disables an endpoint whose every attempt failed for WEBHOOK_DISABLE_AFTER_MS, with an audit record", async () => {
    const r = await startReceiver(() => 503);
    receivers.push(r);
    const made = await s.api.webhooks.createEndpoint({ url: r.url, eventTypes: ["key.created"] });
    const endpointId = made.data?.endpoint?.id as string;
    const started = s.clock.now();
    await s.seed.key();
    await r.waitFor(1);
    const listed = async () =>
      (await s.api.webhooks.listEndpoints({})).data.find((e) => e.id === endpointId);
    expect(Number(await eventually(async () => (await listed())?.failingSince))).toBe(started);
    // Days of failures: a new event each day, each failing.
    for (let day = 1; day <= 3; day++) {
      s.clock.advance(DAY);
      await s.seed.key();
      await r.waitFor(day + 1);
    }
    const disabled = await eventually(async () => {
      const e = await listed();
      return e && !e.enabled ? e : undefined;
    });
    expect(disabled.disabledReason).toContain("every attempt failed since");
    const audit = await s.db.query<{ actor_type: string; actor_id: string }>(
      "select actor_type, actor_id from audit_logs where resource_id = $1 and event = 'webhook.disable'",
      [endpointId],
    );
    expect(audit).toEqual([{ actor_type: "system", actor_id: "webhooks" }]);
    expect((await s.admin("/metrics")).text).toContain(
      "latchkey_webhook_endpoints_disabled_total 1",
    );
    // Its pending deliveries are given up (one a change wrote while it was being disabled
    // too, at the dispatcher's next pass).
    await eventually(async () => {
      const pending = await s.db.query(
        "select id from webhook_deliveries where endpoint_id = $1 and status = 'pending'",
        [endpointId],
      );
      return pending.length === 0 ? true : undefined;
    });
    // Nothing is sent while disabled; enabling it again clears its failure record.
    const count = r.received.length;
    await s.seed.key();
    const enabled = await s.api.webhooks.updateEndpoint({ endpointId, enabled: true });
    expect(enabled.data?.failingSince).toBeUndefined();
    expect(enabled.data?.disabledReason).toBeUndefined();
    expect(r.received.length).toBe(count);
  });
});
