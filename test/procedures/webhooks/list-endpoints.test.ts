import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { CONFIG, newEndpoint } from "./endpoints.js";

// webhooks.listEndpoints: pages of the caller's workspace's endpoints by id, never a secret,
// never another workspace's endpoint.

const s = useServer({ config: CONFIG });

describe("webhooks.listEndpoints", () => {
  it("pages the workspace's endpoints by id and leaves out other workspaces'", async () => {
    const ws = await s.seed.workspace();
    const key = await s.seed.rootKey(["webhook.*.create_webhook", "webhook.*.read_webhook"], ws);
    const api = s.as(key);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await newEndpoint(s, ["key.created"], api)).id);
    await newEndpoint(s);
    const first = await api.webhooks.listEndpoints({ limit: 2 });
    expect(first.pagination?.hasMore).toBe(true);
    const second = await api.webhooks.listEndpoints({ limit: 2, cursor: first.pagination?.cursor });
    expect(second.pagination?.hasMore).toBe(false);
    expect([...first.data, ...second.data].map((e) => e.id)).toEqual(ids.sort());
    const raw = await s.call("json", "webhooks.listEndpoints", {}, key);
    expect(JSON.stringify(raw.data)).not.toMatch(/whsec_|secret"/i);
  });

  it("answers 403 without webhook.*.read_webhook", async () => {
    const r = await refusal(
      s.as(await s.seed.rootKey(["webhook.*.create_webhook"])).webhooks.listEndpoints({}),
    );
    expect(r.status).toBe(403);
    expect(r.detail).toContain("webhook.*.read_webhook");
  });

  it("answers 400 naming limit when it is out of bounds", async () => {
    const r = await refusal(s.api.webhooks.listEndpoints({ limit: 101 }));
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe("/limit");
  });
});
