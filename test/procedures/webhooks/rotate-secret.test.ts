import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { auditOf, CONFIG, newEndpoint } from "./endpoints.js";

// webhooks.rotateSecret: a new secret, shown once; the former one signs for the grace asked
// (a day by default, 0: not at all); audited as webhook.rotate_secret. How deliveries are
// signed meanwhile is in rotation-and-disabling.test.ts.

const s = useServer({ config: CONFIG });

describe("webhooks.rotateSecret", () => {
  it("answers a new secret and keeps the former one for a day by default", async () => {
    const { id, secret } = await newEndpoint(s);
    const res = await s.api.webhooks.rotateSecret({ endpointId: id });
    expect(res.data?.secret).toMatch(/^whsec_/);
    expect(res.data?.secret).not.toBe(secret);
    expect(res.data?.previousSecretExpiresAt).toBe(BigInt(s.clock.now() + 86_400_000));
    expect(await auditOf(s, res.meta?.requestId)).toEqual(["webhook.rotate_secret"]);
    const listed = (await s.api.webhooks.listEndpoints({})).data.find((e) => e.id === id);
    expect(listed?.previousSecretExpiresAt).toBe(BigInt(s.clock.now() + 86_400_000));
  });

  it("retires the former secret at once with a grace of 0", async () => {
    const { id } = await newEndpoint(s);
    const res = await s.api.webhooks.rotateSecret({
      endpointId: id,
      previousSecretExpiresInMs: 0n,
    });
    expect(res.data?.previousSecretExpiresAt).toBeUndefined();
    const [row] = await s.db.query<{ previous_secret: string | null }>(
      "select previous_secret from webhook_endpoints where id = $1",
      [id],
    );
    expect(row?.previous_secret).toBeNull();
  });

  it("answers 400 naming previousSecretExpiresInMs beyond 7 days", async () => {
    const { id } = await newEndpoint(s);
    const r = await refusal(
      s.api.webhooks.rotateSecret({ endpointId: id, previousSecretExpiresInMs: 604_800_001n }),
    );
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe("/previousSecretExpiresInMs");
  });

  it("answers 403 naming webhook.<id>.update_webhook and 404 for another workspace's", async () => {
    const { id } = await newEndpoint(s);
    const reader = s.as(await s.seed.rootKey(["webhook.*.read_webhook"]));
    const r = await refusal(reader.webhooks.rotateSecret({ endpointId: id }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`webhook.${id}.update_webhook`);
    const ws = await s.seed.workspace();
    const other = await newEndpoint(
      s,
      ["key.created"],
      s.as(await s.seed.rootKey(["webhook.*.create_webhook"], ws)),
    );
    expect((await refusal(s.api.webhooks.rotateSecret({ endpointId: other.id }))).status).toBe(404);
  });
});
