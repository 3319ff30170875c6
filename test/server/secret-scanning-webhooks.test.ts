import { generateKeyPairSync, sign } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { keyIdentifierOf, readPublicKeySetting } from "../../src/domain/github-keys.js";
import { useServer } from "../harness/server.js";
import { type Receiver, startReceiver } from "../harness/webhook-receiver.js";

// A leak that GitHub's secret scanning reports is announced to the workspace's webhook
// endpoints, with what the API's policy did to the key, in the transaction that applied it.

const github = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const PEM = github.publicKey.export({ type: "spki", format: "pem" }).toString();
const s = useServer({
  config: {
    githubSecretScanningPublicKeys: readPublicKeySetting(PEM),
    webhookAllowPrivate: true,
    webhookPollIntervalMs: 20,
  },
});
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
  const rows = await s.db.query<{ id: string }>("select id from webhook_endpoints");
  for (const r of rows) await s.api.webhooks.deleteEndpoint({ endpointId: r.id });
});

/** Reports `token` found at `url`, signed by the test's GitHub key. */
function report(token: string, url: string) {
  const body = JSON.stringify([{ token, type: "latchkey_api_key", url, source: "content" }]);
  return s.raw("/v2/secret-scanning/github", {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      "github-public-key-identifier": keyIdentifierOf(github.publicKey),
      "github-public-key-signature": sign("sha256", Buffer.from(body), github.privateKey).toString(
        "base64",
      ),
    },
  });
}

async function endpoint(eventTypes: string[]) {
  const r = await startReceiver();
  receivers.push(r);
  const made = await s.api.webhooks.createEndpoint({ url: r.url, eventTypes });
  return { r, secret: made.data?.secret as string };
}

describe("key.leaked", () => {
  it("is sent with the policy and its change, signed, beside key.updated for a disabled key", async () => {
    const { r, secret } = await endpoint(["key.leaked", "key.updated", "key.deleted"]);
    const apiId = await s.seed.api();
    const { data } = await s.api.keys.createKey({ apiId, prefix: "lk" });
    const url = "https://github.com/o/r/blob/abc/.env";
    expect((await report(data?.key as string, url)).status).toBe(200);
    const got = await r.waitFor(2);
    const hook = new Webhook(secret);
    const bodies = got.map((g) =>
      hook.verify(g.body, {
        "webhook-id": g.headers["webhook-id"] as string,
        "webhook-timestamp": g.headers["webhook-timestamp"] as string,
        "webhook-signature": g.headers["webhook-signature"] as string,
      }),
    ) as { type: string; data: Record<string, unknown> }[];
    const byType = Object.fromEntries(bodies.map((b) => [b.type, b.data]));
    expect(byType["key.updated"]).toEqual({ keyId: data?.keyId, apiId, changed: ["enabled"] });
    expect(byType["key.leaked"]).toMatchObject({
      keyId: data?.keyId,
      apiId,
      source: "content",
      url,
      policy: "disable",
      change: "disable",
    });
    expect(JSON.stringify(bodies)).not.toContain(data?.key as string);
  });

  it("sends key.deleted for a key its API's policy revokes, and nothing more for a repeated report", async () => {
    const { r } = await endpoint(["key.leaked", "key.deleted"]);
    const apiId = (await s.api.apis.createApi({ name: "revoking", leakPolicy: 1 })).data
      ?.apiId as string;
    const { data } = await s.api.keys.createKey({ apiId, prefix: "lk" });
    const url = "https://github.com/o/r/blob/def/config.js";
    expect((await report(data?.key as string, url)).status).toBe(200);
    const got = (await r.waitFor(2)).map((g) => JSON.parse(g.body).type).sort();
    expect(got).toEqual(["key.deleted", "key.leaked"]);
    expect((await report(data?.key as string, url)).status).toBe(200);
    const rows = await s.db.query<{ n: number }>(
      "select count(*)::int as n from webhook_deliveries where payload like $1",
      [`%${data?.keyId}%`],
    );
    expect(rows[0]?.n).toBe(2);
  });
});
