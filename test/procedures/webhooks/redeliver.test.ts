import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { eventually, startReceiver } from "../../harness/webhook-receiver.js";
import { auditOf, CONFIG, newEndpoint } from "./endpoints.js";

// webhooks.redeliver: sends a delivery again now, with the same webhook-id, whatever its
// state; audited as webhook.redeliver; 412 while the endpoint is disabled.

const s = useServer({ config: { ...CONFIG, webhookPollIntervalMs: 20 } });

describe("webhooks.redeliver", () => {
  it("sends a delivered delivery again with the same webhook-id", async () => {
    const r = await startReceiver();
    try {
      const made = await s.api.webhooks.createEndpoint({ url: r.url, eventTypes: ["key.created"] });
      const endpointId = made.data?.endpoint?.id as string;
      await s.seed.key();
      const [first] = await r.waitFor(1);
      const deliveryId = first?.headers["webhook-id"] as string;
      await eventually(async () => {
        const [d] = (await s.api.webhooks.listDeliveries({ endpointId })).data;
        return d?.status === "delivered" ? d : undefined;
      });
      const res = await s.api.webhooks.redeliver({ endpointId, deliveryId });
      expect(await auditOf(s, res.meta?.requestId)).toEqual(["webhook.redeliver"]);
      const [, again] = await r.waitFor(2);
      expect(again?.headers["webhook-id"]).toBe(deliveryId);
      expect(again?.body).toBe(first?.body);
    } finally {
      await r.close();
    }
  });

  it("answers 404 for a delivery of another endpoint, 412 while disabled, 403 without the grant", async () => {
    const a = await newEndpoint(s);
    const b = await newEndpoint(s);
    await s.seed.key();
    const [d] = await s.db.query<{ id: string }>(
      "select id from webhook_deliveries where endpoint_id = $1",
      [a.id],
    );
    const wrong = await refusal(
      s.api.webhooks.redeliver({ endpointId: b.id, deliveryId: d?.id as string }),
    );
    expect(wrong).toMatchObject({
      status: 404,
      errorCode: "err:svc:data:webhook_delivery_not_found",
    });
    const reader = s.as(await s.seed.rootKey(["webhook.*.read_webhook"]));
    const denied = await refusal(
      reader.webhooks.redeliver({ endpointId: a.id, deliveryId: d?.id as string }),
    );
    expect(denied.status).toBe(403);
    expect(denied.detail).toContain(`webhook.${a.id}.update_webhook`);
    await s.api.webhooks.updateEndpoint({ endpointId: a.id, enabled: false });
    const off = await refusal(
      s.api.webhooks.redeliver({ endpointId: a.id, deliveryId: d?.id as string }),
    );
    expect(off.status).toBe(412);
    const ws = await s.seed.workspace();
    const other = await newEndpoint(
      s,
      ["key.created"],
      s.as(await s.seed.rootKey(["webhook.*.create_webhook"], ws)),
    );
    expect(
      (await refusal(s.api.webhooks.redeliver({ endpointId: other.id, deliveryId: "msg_x" })))
        .status,
    ).toBe(404);
  });
});
