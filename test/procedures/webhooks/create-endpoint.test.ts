import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { auditOf, CONFIG, UNUSED_URL } from "./endpoints.js";

// webhooks.createEndpoint: an endpoint of the caller's workspace, enabled, with a secret shown
// once; audited as webhook.create; bounded in every field and in number per workspace.

const s = useServer({ config: CONFIG });

describe("webhooks.createEndpoint", () => {
  it("creates an enabled endpoint, answers its secret once and never lists it", async () => {
    const res = await s.api.webhooks.createEndpoint({
      url: UNUSED_URL,
      eventTypes: ["key.expired", "credits.low", "key.expired"],
      description: "alerts",
      creditsLowThreshold: 10n,
    });
    const e = res.data?.endpoint;
    expect(res.data?.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(e).toMatchObject({
      url: UNUSED_URL,
      eventTypes: ["key.expired", "credits.low"],
      description: "alerts",
      enabled: true,
      creditsLowThreshold: 10n,
      createdAt: BigInt(s.clock.now()),
    });
    expect(e?.id).toMatch(/^whep_/);
    expect(await auditOf(s, res.meta?.requestId)).toEqual(["webhook.create"]);
    const listed = await s.raw("/v2/webhooks.listEndpoints", {
      method: "POST",
      headers: { authorization: `Bearer ${s.rootKey}`, "content-type": "application/json" },
      body: "{}",
    });
    const secret = res.data?.secret ?? "";
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(6));
  });

  it.each([
    [{ url: "ftp://example.com/x", eventTypes: ["key.created"] }, "/url"],
    [{ url: "https://user:pw@example.com/x", eventTypes: ["key.created"] }, "/url"],
    [{ url: `https://example.com/${"a".repeat(2048)}`, eventTypes: ["key.created"] }, "/url"],
    [{ url: "https://example.com/x", eventTypes: ["key.frobbed"] }, "/eventTypes/0"],
    [{ url: "https://example.com/x", eventTypes: [] }, "/eventTypes"],
    [{ url: "https://example.com/x", eventTypes: ["credits.low"] }, "/creditsLowThreshold"],
    [
      { url: "https://example.com/x", eventTypes: ["key.created"], description: "d".repeat(1001) },
      "/description",
    ],
    [
      { url: "https://example.com/x", eventTypes: ["key.created"], creditsLowThreshold: -1n },
      "/creditsLowThreshold",
    ],
  ])("answers 400 naming the field (case %#)", async (body, location) => {
    const before = await s.snapshot();
    const r = await refusal(s.api.webhooks.createEndpoint(body));
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toContain(location);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers 403 without webhook.*.create_webhook, and writes nothing", async () => {
    const reader = s.as(await s.seed.rootKey(["webhook.*.read_webhook"]));
    const before = await s.snapshot();
    const r = await refusal(
      reader.webhooks.createEndpoint({ url: UNUSED_URL, eventTypes: ["key.created"] }),
    );
    expect(r.status).toBe(403);
    expect(r.detail).toContain("webhook.*.create_webhook");
    expect(await s.changesSince(before)).toEqual({});
  });

  it("refuses a 21st endpoint of a workspace with 412", async () => {
    const ws = await s.seed.workspace();
    const api = s.as(await s.seed.rootKey(["webhook.*.create_webhook"], ws));
    for (let i = 0; i < 20; i++)
      await api.webhooks.createEndpoint({ url: UNUSED_URL, eventTypes: ["key.created"] });
    const r = await refusal(
      api.webhooks.createEndpoint({ url: UNUSED_URL, eventTypes: ["key.created"] }),
    );
    expect(r).toMatchObject({ status: 412, errorCode: "err:svc:application:precondition_failed" });
  });
});
