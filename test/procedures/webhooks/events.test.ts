import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RefillInterval } from "../../../gen/latchkey/v2/common_pb.js";
import { mutateAs } from "../../../src/services/mutation.js";
import { useServer } from "../../harness/server.js";
import { eventually, type Receiver, startReceiver } from "../../harness/webhook-receiver.js";
import { issueKey } from "../keys/issue-key.js";

// What each event carries and when it is sent: lifecycle events with the change, key.expired
// once within a minute of the expiry, the credit events from the balance moves (crossing an
// endpoint's threshold, reaching 0, a refill), ratelimit.exceeded once per key, limit and
// window whatever the number of refusals.

const s = useServer({ config: { webhookAllowPrivate: true, webhookPollIntervalMs: 20 } });
let r: Receiver;
let endpointId: string;

beforeEach(async () => {
  r = await startReceiver();
});
afterEach(async () => {
  await s.api.webhooks.deleteEndpoint({ endpointId });
  await r.close();
});

async function subscribe(eventTypes: string[], creditsLowThreshold?: bigint) {
  const made = await s.api.webhooks.createEndpoint({ url: r.url, eventTypes, creditsLowThreshold });
  endpointId = made.data?.endpoint?.id as string;
}

/**
 * The events the receiver got, as `{type, data}`, by type: deliveries are attempted
 * concurrently, so their arrival order is not theirs to keep (the docs say so).
 */
async function events(n: number) {
  const got = await r.waitFor(n);
  return byType(
    got.map((g) => {
      const b = JSON.parse(g.body) as {
        type: string;
        timestamp: string;
        data: Record<string, unknown>;
      };
      expect(b.timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
      return { type: b.type, data: b.data };
    }),
  );
}

/** Events in the order of their types. */
function byType<T extends { type: string }>(list: T[]): T[] {
  return [...list].sort((a, b) => a.type.localeCompare(b.type));
}

describe("lifecycle events", () => {
  it("key.updated names the changed fields, key.rerolled both keys, key.deleted the key", async () => {
    await subscribe(["key.updated", "key.rerolled", "key.deleted"]);
    const k = await issueKey(s, { name: "a" });
    await s.api.keys.updateKey({ keyId: k.keyId, name: "b", meta: { plan: "pro" } });
    const rolled = await s.api.keys.rerollKey({ keyId: k.keyId, expiration: 60_000n });
    await s.api.keys.deleteKey({ keyId: k.keyId });
    const got = await events(3);
    expect(got).toEqual(
      byType([
        {
          type: "key.updated",
          data: { keyId: k.keyId, apiId: k.apiId, changed: ["name", "meta"] },
        },
        {
          type: "key.rerolled",
          data: {
            keyId: rolled.data?.keyId,
            apiId: k.apiId,
            previousKeyId: k.keyId,
            previousKeyExpires: s.clock.now() + 60_000,
          },
        },
        { type: "key.deleted", data: { keyId: k.keyId, apiId: k.apiId, permanent: false } },
      ]),
    );
    expect(JSON.stringify(got)).not.toContain(rolled.data?.key as string);
  });

  it("identity.created, identity.updated and identity.deleted", async () => {
    await subscribe(["identity.created", "identity.updated", "identity.deleted"]);
    const externalId = `ev_${Date.now()}`;
    const made = await s.api.identities.createIdentity({ externalId });
    const identityId = made.data?.identityId as string;
    await s.api.identities.updateIdentity({ identity: identityId, meta: { a: 1 } });
    await s.api.identities.deleteIdentity({ identity: identityId });
    expect(await events(3)).toEqual(
      byType([
        { type: "identity.created", data: { identityId, externalId } },
        { type: "identity.updated", data: { identityId, externalId, changed: ["meta"] } },
        { type: "identity.deleted", data: { identityId, externalId } },
      ]),
    );
  });
});

describe("key.leaked", () => {
  it("goes out through Change.emit in the transaction that applies a leak", async () => {
    await subscribe(["key.leaked"]);
    const k = await issueKey(s);
    const data = {
      keyId: k.keyId,
      apiId: k.apiId,
      source: "content",
      url: "https://github.com/acme/app/blob/main/.env",
      policy: "notify" as const,
      change: "none" as const,
      reportedAt: s.clock.now(),
    };
    const actor = {
      type: "system" as const,
      id: "leaks",
      workspaceId: s.workspaceId,
      requestId: null,
    };
    await mutateAs(s.app.deps, actor, async (_, change) => {
      change.emit({ type: "key.leaked", data });
    });
    // A unit that fails writes nothing.
    await mutateAs(s.app.deps, actor, async (_, change) => {
      change.emit({ type: "key.leaked", data: { ...data, source: "rolled back" } });
      throw new Error("refused");
    }).catch(() => undefined);
    expect(await events(1)).toEqual([{ type: "key.leaked", data }]);
    const rows = await s.db.query("select id from webhook_deliveries where endpoint_id = $1", [
      endpointId,
    ]);
    expect(rows).toHaveLength(1);
  });
});

describe("key.expired", () => {
  it("is sent once, soon after the expiry, and not again", async () => {
    await subscribe(["key.expired"]);
    const expires = s.clock.now() + 1_000;
    const k = await issueKey(s, { expires: BigInt(expires) });
    s.clock.advance(2_000);
    expect(await events(1)).toEqual([
      { type: "key.expired", data: { keyId: k.keyId, apiId: k.apiId, expires } },
    ]);
    // Passes go on; the expiry is not announced again.
    await s.app.webhooks.runPasses();
    await s.app.webhooks.runPasses();
    const rows = await s.db.query("select id from webhook_deliveries where endpoint_id = $1", [
      endpointId,
    ]);
    expect(rows).toHaveLength(1);
  });
});

describe("credit events", () => {
  it("credits.low when the balance crosses the threshold, credits.exhausted at 0", async () => {
    await subscribe(["credits.low", "credits.exhausted"], 1n);
    const k = await issueKey(s, { credits: { remaining: 3n } });
    for (let i = 0; i < 4; i++) await s.api.keys.verifyKey({ key: k.key });
    const subject = { keyId: k.keyId, apiId: k.apiId };
    expect(await events(2)).toEqual([
      { type: "credits.exhausted", data: { ...subject, remaining: 0 } },
      { type: "credits.low", data: { ...subject, remaining: 1, threshold: 1 } },
    ]);
    // The refused fourth verification moved nothing, so it sends nothing.
    await s.app.webhooks.runPasses();
    expect(
      await s.db.query("select id from webhook_deliveries where endpoint_id = $1", [endpointId]),
    ).toHaveLength(2);
  });

  it("credits.refilled when a refill tops the balance up", async () => {
    await subscribe(["credits.refilled"]);
    const refill = { interval: RefillInterval.DAILY, amount: 10n };
    const k = await issueKey(s, { credits: { remaining: 0n, refill } });
    s.clock.advance(86_400_000);
    await s.api.keys.verifyKey({ key: k.key });
    expect(await events(1)).toEqual([
      {
        type: "credits.refilled",
        data: { keyId: k.keyId, apiId: k.apiId, refilled: 10, remaining: 9 },
      },
    ]);
  });

  it("an identity's pool is announced by identity", async () => {
    await subscribe(["credits.exhausted"]);
    const externalId = `pool_${Date.now()}`;
    const made = await s.api.identities.createIdentity({
      externalId,
      credits: { remaining: 1n },
    });
    const identityId = made.data?.identityId as string;
    const k = await issueKey(s, { externalId });
    await s.api.keys.verifyKey({ key: k.key });
    expect(await events(1)).toEqual([
      { type: "credits.exhausted", data: { identityId, remaining: 0 } },
    ]);
  });
});

describe("ratelimit.exceeded", () => {
  it("is sent once per key, limit and window however often the key is refused", async () => {
    await subscribe(["ratelimit.exceeded"]);
    const k = await issueKey(s, {
      ratelimits: [{ name: "calls", limit: 1n, duration: 60_000n, autoApply: true }],
    });
    const codes: unknown[] = [];
    for (let i = 0; i < 6; i++) codes.push((await s.api.keys.verifyKey({ key: k.key })).data?.code);
    expect(codes.filter((c) => c !== codes[0])).toHaveLength(5);
    const [first] = await events(1);
    const windowStart = Math.floor(s.clock.now() / 60_000) * 60_000;
    expect(first).toEqual({
      type: "ratelimit.exceeded",
      data: {
        keyId: k.keyId,
        apiId: k.apiId,
        ratelimit: "calls",
        limit: 1,
        durationMs: 60_000,
        windowStart,
        reset: windowStart + 60_000,
      },
    });
    s.clock.advance(60_000);
    for (let i = 0; i < 3; i++) await s.api.keys.verifyKey({ key: k.key });
    await events(2);
    const rows = await eventually(async () => {
      const x = await s.db.query("select id from webhook_deliveries where endpoint_id = $1", [
        endpointId,
      ]);
      return x.length >= 2 ? x : undefined;
    });
    expect(rows).toHaveLength(2);
  });
});
