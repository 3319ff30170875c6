import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { eventually } from "../../harness/webhook-receiver.js";
import { CONFIG, newEndpoint } from "./endpoints.js";

// webhooks.listDeliveries: an endpoint's deliveries, newest first, each with its attempts
// (status, response code, latency, next retry). Deliveries to real receivers are in
// delivery.test.ts; here the endpoint's URL has no listener, so every attempt is an error.

const s = useServer({ config: { ...CONFIG, webhookPollIntervalMs: 20 } });

describe("webhooks.listDeliveries", () => {
  it("pages deliveries newest first with their attempts and next retry", async () => {
    const { id } = await newEndpoint(s);
    const keys = [];
    for (let i = 0; i < 3; i++) {
      keys.push((await s.seed.key()).keyId);
      s.clock.advance(1);
    }
    const page = await eventually(async () => {
      const p = await s.api.webhooks.listDeliveries({ endpointId: id, limit: 2 });
      return p.data.every((d) => d.attempts.length === 1) ? p : undefined;
    });
    expect(page.data.map((d) => d.eventType)).toEqual(["key.created", "key.created"]);
    expect(page.pagination?.hasMore).toBe(true);
    const [newest] = page.data;
    expect(newest?.status).toBe("pending");
    expect(newest?.attempts[0]).toMatchObject({ status: "error" });
    expect(newest?.attempts[0]?.error).toContain("request failed");
    expect(newest?.nextAttemptAt).toBe(newest?.attempts[0]?.nextRetryAt);
    const rest = await s.api.webhooks.listDeliveries({
      endpointId: id,
      limit: 2,
      cursor: page.pagination?.cursor,
    });
    expect(rest.data).toHaveLength(1);
    expect(rest.pagination?.hasMore).toBe(false);
    const all = [...page.data, ...rest.data].map((d) => d.id);
    expect(new Set(all).size).toBe(3);
  });

  it("answers 403 naming webhook.<id>.read_webhook, 404 for another workspace's, 400 for limit", async () => {
    const { id } = await newEndpoint(s);
    const writer = s.as(await s.seed.rootKey(["webhook.*.update_webhook"]));
    const r = await refusal(writer.webhooks.listDeliveries({ endpointId: id }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`webhook.${id}.read_webhook`);
    const ws = await s.seed.workspace();
    const other = await newEndpoint(
      s,
      ["key.created"],
      s.as(await s.seed.rootKey(["webhook.*.create_webhook"], ws)),
    );
    expect((await refusal(s.api.webhooks.listDeliveries({ endpointId: other.id }))).status).toBe(
      404,
    );
    const bad = await refusal(s.api.webhooks.listDeliveries({ endpointId: id, limit: 0 }));
    expect(bad.errors[0]?.location).toBe("/limit");
  });
});
