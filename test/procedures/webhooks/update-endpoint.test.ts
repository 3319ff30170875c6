import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { auditOf, CONFIG, newEndpoint } from "./endpoints.js";

// webhooks.updateEndpoint: changes what the request names, leaves the rest, audited as
// webhook.update.

const s = useServer({ config: CONFIG });

describe("webhooks.updateEndpoint", () => {
  it("changes the named fields and leaves the others", async () => {
    const { id } = await newEndpoint(s, ["key.created", "key.deleted"]);
    const res = await s.api.webhooks.updateEndpoint({
      endpointId: id,
      eventTypes: ["credits.low"],
      creditsLowThreshold: 5n,
      description: "now billing",
    });
    expect(res.data).toMatchObject({
      id,
      eventTypes: ["credits.low"],
      creditsLowThreshold: 5n,
      description: "now billing",
      enabled: true,
      updatedAt: BigInt(s.clock.now()),
    });
    expect(await auditOf(s, res.meta?.requestId)).toEqual(["webhook.update"]);
    const off = await s.api.webhooks.updateEndpoint({ endpointId: id, enabled: false });
    expect(off.data).toMatchObject({ enabled: false, eventTypes: ["credits.low"] });
  });

  it("clears the description with null on the /v2 door", async () => {
    const { id } = await newEndpoint(s);
    await s.api.webhooks.updateEndpoint({ endpointId: id, description: "x" });
    const res = await s.call("json", "webhooks.updateEndpoint", {
      endpointId: id,
      description: null,
    });
    expect(res.status).toBe(200);
    expect(res.data.description).toBeUndefined();
  });

  it.each([
    [{ eventTypes: ["nope"] }, "/eventTypes/0"],
    [{ url: "gopher://x.example/" }, "/url"],
    [{ eventTypes: ["credits.low"] }, "/creditsLowThreshold"],
  ])("answers 400 naming the field for %j, changing nothing", async (change, location) => {
    const { id } = await newEndpoint(s);
    const before = await s.snapshot();
    const r = await refusal(s.api.webhooks.updateEndpoint({ endpointId: id, ...change }));
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toContain(location);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers 403 naming webhook.<id>.update_webhook", async () => {
    const { id } = await newEndpoint(s);
    const reader = s.as(await s.seed.rootKey(["webhook.*.read_webhook"]));
    const r = await refusal(reader.webhooks.updateEndpoint({ endpointId: id, enabled: false }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`webhook.${id}.update_webhook`);
  });

  it("answers 404 for another workspace's endpoint", async () => {
    const ws = await s.seed.workspace();
    const other = s.as(await s.seed.rootKey(["webhook.*.create_webhook"], ws));
    const { id } = await newEndpoint(s, ["key.created"], other);
    const r = await refusal(s.api.webhooks.updateEndpoint({ endpointId: id, enabled: false }));
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:webhook_endpoint_not_found" });
  });
});
