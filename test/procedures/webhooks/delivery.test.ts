import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { eventually, type Receiver, startReceiver } from "../../harness/webhook-receiver.js";

// Deliveries to real HTTP receivers in the test's process: what Latchkey sends verifies with
// the official standardwebhooks package, a receiver that fails or hangs is retried with
// backoff (moved by the test clock) until it answers, redirects are not followed.

const s = useServer({
  config: {
    webhookAllowPrivate: true,
    webhookPollIntervalMs: 20,
    webhookRetryBaseMs: 5_000,
    webhookTimeoutMs: 500,
    webhookConnectTimeoutMs: 500,
  },
});
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  const rows = await s.db.query<{ id: string }>("select id from webhook_endpoints");
  for (const r of rows) await s.api.webhooks.deleteEndpoint({ endpointId: r.id });
});

async function endpointFor(receiver: Receiver, eventTypes = ["key.created"]) {
  receivers.push(receiver);
  const made = await s.api.webhooks.createEndpoint({ url: receiver.url, eventTypes });
  return { id: made.data?.endpoint?.id as string, secret: made.data?.secret as string };
}

const status = async (endpointId: string) =>
  (await s.api.webhooks.listDeliveries({ endpointId })).data;

describe("webhook delivery", () => {
  it("sends a key.created that the standardwebhooks package verifies, with no secret in it", async () => {
    const r = await startReceiver();
    const { secret, id } = await endpointFor(r);
    const key = await s.seed.key({ name: "billing" });
    const [got] = await r.waitFor(1);
    const payload = new Webhook(secret).verify(got?.body as string, {
      "webhook-id": got?.headers["webhook-id"] as string,
      "webhook-timestamp": got?.headers["webhook-timestamp"] as string,
      "webhook-signature": got?.headers["webhook-signature"] as string,
    }) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe("key.created");
    expect(payload.data).toMatchObject({ keyId: key.keyId, apiId: key.apiId, name: "billing" });
    expect(got?.body).not.toContain(key.key);
    expect(got?.headers["webhook-id"]).toMatch(/^msg_/);
    expect(got?.headers["content-type"]).toBe("application/json");
    const [d] = await eventually(async () => {
      const list = await status(id);
      return list[0]?.status === "delivered" ? list : undefined;
    });
    expect(d?.attempts).toMatchObject([{ status: "delivered", responseStatus: 204 }]);
    expect((await s.admin("/metrics")).text).toMatch(
      /latchkey_webhook_attempts_total\{outcome="delivered"\} [1-9]/,
    );
  });

  it("a receiver that answers 500 is retried after WEBHOOK_RETRY_BASE_MS, then 200 delivers", async () => {
    const r = await startReceiver((n) => (n === 0 ? 500 : 200));
    const { id } = await endpointFor(r);
    await s.seed.key();
    await r.waitFor(1);
    const [first] = await eventually(async () => {
      const d = (await status(id))[0];
      return d?.attempts.length === 1 ? [d] : undefined;
    });
    expect(first?.status).toBe("pending");
    expect(first?.attempts[0]).toMatchObject({ status: "failed", responseStatus: 500 });
    const wait = Number(first?.nextAttemptAt) - Number(first?.attempts[0]?.at);
    expect(wait).toBeGreaterThanOrEqual(4_000);
    expect(wait).toBeLessThanOrEqual(5_000);
    // Nothing more is sent until the clock reaches the retry.
    expect(r.received).toHaveLength(1);
    s.clock.advance(5_000);
    const [got1, got2] = await r.waitFor(2);
    expect(got2?.headers["webhook-id"]).toBe(got1?.headers["webhook-id"]);
    expect(got2?.body).toBe(got1?.body);
    await eventually(async () =>
      (await status(id))[0]?.status === "delivered" ? true : undefined,
    );
  });

  it("a receiver that hangs past the timeout is an error, retried, and recovers", async () => {
    const r = await startReceiver((n) => (n === 0 ? "hang" : 200));
    const { id } = await endpointFor(r);
    await s.seed.key();
    const d = await eventually(async () => {
      const x = (await status(id))[0];
      return x?.attempts.length === 1 ? x : undefined;
    });
    expect(d.attempts[0]).toMatchObject({ status: "error", error: "timed out after 500 ms" });
    expect(d.attempts[0]?.responseStatus).toBeUndefined();
    s.clock.advance(5_000);
    await r.waitFor(2);
    await eventually(async () =>
      (await status(id))[0]?.status === "delivered" ? true : undefined,
    );
  });

  it("does not follow a redirect", async () => {
    const target = await startReceiver();
    receivers.push(target);
    const r = await startReceiver((_, res) => {
      res.writeHead(307, { location: target.url });
      res.end();
      return undefined;
    });
    const { id } = await endpointFor(r);
    await s.seed.key();
    const d = await eventually(async () => {
      const x = (await status(id))[0];
      return x?.attempts.length === 1 ? x : undefined;
    });
    expect(d.attempts[0]).toMatchObject({ status: "failed", responseStatus: 307 });
    expect(d.attempts[0]?.error).toContain("redirects are not followed");
    expect(target.received).toEqual([]);
  });

  it("sends nothing for event types the endpoint does not subscribe to", async () => {
    const r = await startReceiver();
    const { id } = await endpointFor(r, ["identity.created"]);
    await s.seed.key();
    await s.api.identities.createIdentity({ externalId: `wh_${Date.now()}` });
    const [got] = await r.waitFor(1);
    expect(JSON.parse(got?.body as string).type).toBe("identity.created");
    expect((await status(id)).map((d) => d.eventType)).toEqual(["identity.created"]);
  });
});
