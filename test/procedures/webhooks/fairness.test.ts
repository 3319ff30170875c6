import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { type Receiver, startReceiver } from "../../harness/webhook-receiver.js";

// One tenant's slow receivers take at most WEBHOOK_WORKSPACE_CONCURRENCY of a node's attempts
// (and each endpoint at most WEBHOOK_ENDPOINT_CONCURRENCY): another tenant's deliveries go
// out meanwhile, long before the slow ones time out.

const s = useServer({
  config: {
    webhookAllowPrivate: true,
    webhookPollIntervalMs: 20,
    webhookConcurrency: 4,
    webhookEndpointConcurrency: 2,
    webhookWorkspaceConcurrency: 2,
    webhookTimeoutMs: 120_000,
  },
});

describe("fairness between tenants", () => {
  it("delivers another workspace's event while one workspace's receivers hang", async () => {
    const slowWs = await s.seed.workspace();
    const slowKey = await s.seed.rootKey(["*.*.*"], slowWs);
    const slow = s.as(slowKey);
    const hanging: Receiver[] = [];
    const fast = await startReceiver();
    try {
      for (let i = 0; i < 3; i++) {
        const r = await startReceiver(() => "hang");
        hanging.push(r);
        await slow.webhooks.createEndpoint({ url: r.url, eventTypes: ["key.created"] });
      }
      // Six deliveries of the slow workspace (two per endpoint), more than the node's four slots.
      const slowApi = await s.seed.api(slowWs);
      for (let i = 0; i < 2; i++) await s.seed.key({ apiId: slowApi }, slowKey);
      const held = () => hanging.reduce((n, r) => n + r.received.length, 0);
      const deadline = Date.now() + 30_000;
      while (held() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(held()).toBe(2);

      await s.api.webhooks.createEndpoint({ url: fast.url, eventTypes: ["key.created"] });
      const key = await s.seed.key();
      const [got] = await fast.waitFor(1);
      expect(JSON.parse(got?.body as string).data.keyId).toBe(key.keyId);
      // The slow workspace still holds exactly its share.
      expect(held()).toBe(2);
    } finally {
      for (const r of hanging) await r.close();
      await fast.close();
    }
  });
});
