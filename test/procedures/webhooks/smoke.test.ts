import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";

const s = useServer({ config: { webhookAllowPrivate: true } });

describe("smoke", () => {
  it("creates and lists", async () => {
    const made = await s.api.webhooks.createEndpoint({
      url: "http://127.0.0.1:1/x",
      eventTypes: ["key.created"],
    });
    expect(made.data?.secret).toMatch(/^whsec_/);
    const list = await s.api.webhooks.listEndpoints({});
    expect(list.data.length).toBe(1);
    await s.seed.key();
    const rows = await s.db.query("select * from webhook_deliveries");
    expect(rows.length).toBe(1);
  });
});
