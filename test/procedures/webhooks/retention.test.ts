import { describe, expect, it } from "vitest";
import { expireWebhookDeliveries } from "../../../src/analytics/retention.js";
import { useServer } from "../../harness/server.js";
import { eventually, startReceiver } from "../../harness/webhook-receiver.js";

// Finished deliveries (delivered or failed) are deleted with their attempts once older than
// WEBHOOK_DELIVERY_RETENTION_DAYS, by the hourly retention pass; pending ones are kept.

const DAY = 86_400_000;
const s = useServer({
  config: { webhookAllowPrivate: true, webhookPollIntervalMs: 20, webhookRetryBaseMs: 3_600_000 },
});

describe("delivery retention", () => {
  it("deletes finished deliveries older than the retention with their attempts, keeps pending ones", async () => {
    const r = await startReceiver();
    try {
      const ok = await s.api.webhooks.createEndpoint({ url: r.url, eventTypes: ["key.created"] });
      await s.seed.key();
      await r.waitFor(1);
      const delivered = await eventually(async () => {
        const [d] = (await s.api.webhooks.listDeliveries({ endpointId: ok.data?.endpoint?.id }))
          .data;
        return d?.status === "delivered" ? d : undefined;
      });
      await s.api.webhooks.deleteEndpoint({ endpointId: ok.data?.endpoint?.id as string });
      // A second endpoint whose receiver is gone: its delivery stays pending (retried in an hour).
      const closed = await startReceiver();
      await closed.close();
      const pending = await s.api.webhooks.createEndpoint({
        url: closed.url,
        eventTypes: ["key.created"],
      });
      const again = await s.api.webhooks.createEndpoint({
        url: r.url,
        eventTypes: ["key.created"],
      });
      await s.seed.key();
      await eventually(async () => {
        const [d] = (
          await s.api.webhooks.listDeliveries({ endpointId: pending.data?.endpoint?.id })
        ).data;
        return d?.attempts.length === 1 ? d : undefined;
      });
      await r.waitFor(2);
      const kept = await eventually(async () => {
        const [d] = (await s.api.webhooks.listDeliveries({ endpointId: again.data?.endpoint?.id }))
          .data;
        return d?.status === "delivered" ? d : undefined;
      });
      expect(delivered.id).not.toBe(kept.id);
      // 29 days on: nothing is old enough.
      expect(await expireWebhookDeliveries(s.db, s.clock.now() + 29 * DAY, 30)).toBe(0);
      // 31 days on: the finished delivery goes with its attempt, the pending one stays.
      expect(await expireWebhookDeliveries(s.db, s.clock.now() + 31 * DAY, 30)).toBe(1);
      const left = await s.db.query<{ status: string }>(
        "select status from webhook_deliveries order by status",
      );
      expect(left).toEqual([{ status: "pending" }]);
      const attempts = await s.db.query<{ n: number }>(
        "select count(*)::int as n from webhook_attempts a where not exists (select 1 from webhook_deliveries d where d.id = a.delivery_id)",
      );
      expect(attempts).toEqual([{ n: 0 }]);
    } finally {
      await r.close();
    }
  });
});
