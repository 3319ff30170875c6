import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { auditOf, CONFIG, newEndpoint } from "./endpoints.js";

// webhooks.deleteEndpoint: removes the endpoint with its deliveries, audited as
// webhook.delete; a second delete is 404.

const s = useServer({ config: CONFIG });

describe("webhooks.deleteEndpoint", () => {
  it("deletes the endpoint and its deliveries, then 404", async () => {
    const { id } = await newEndpoint(s);
    await s.seed.key();
    const res = await s.api.webhooks.deleteEndpoint({ endpointId: id });
    expect(await auditOf(s, res.meta?.requestId)).toEqual(["webhook.delete"]);
    expect(
      await s.db.query("select 1 from webhook_deliveries where endpoint_id = $1", [id]),
    ).toEqual([]);
    const again = await refusal(s.api.webhooks.deleteEndpoint({ endpointId: id }));
    expect(again.status).toBe(404);
  });

  it("answers 403 naming webhook.<id>.delete_webhook, and leaves it", async () => {
    const { id } = await newEndpoint(s);
    const writer = s.as(await s.seed.rootKey(["webhook.*.update_webhook"]));
    const before = await s.snapshot();
    const r = await refusal(writer.webhooks.deleteEndpoint({ endpointId: id }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`webhook.${id}.delete_webhook`);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers 404 for another workspace's endpoint, and 400 without endpointId", async () => {
    const ws = await s.seed.workspace();
    const { id } = await newEndpoint(
      s,
      ["key.created"],
      s.as(await s.seed.rootKey(["webhook.*.create_webhook"], ws)),
    );
    expect((await refusal(s.api.webhooks.deleteEndpoint({ endpointId: id }))).status).toBe(404);
    const r = await refusal(s.api.webhooks.deleteEndpoint({ endpointId: "" }));
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe("/endpointId");
  });
});
