import { Unkey } from "@unkey/api";
import * as errors from "@unkey/api/models/errors";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../harness/server.js";

const s = useServer();
let unkey: Unkey;
beforeAll(() => {
  unkey = new Unkey({ rootKey: s.rootKey, serverURL: s.url });
});

describe("@unkey/api 2.5.1 against Latchkey: keys", () => {
  it("creates, reads, lists, updates, rerolls and deletes keys", async () => {
    const apiId = (await unkey.apis.createApi({ name: "sdk keys" })).data.apiId;
    await unkey.permissions.createRole({ name: "sdk_reader", permissions: ["docs.read"] });
    const created = await unkey.keys.createKey({
      apiId,
      prefix: "sdk",
      name: "sdk key",
      externalId: "sdk_key_owner",
      meta: { plan: "pro" },
      roles: ["sdk_reader"],
      permissions: ["docs.write"],
      expires: 4102444800000,
      credits: { remaining: 100, refill: { interval: "daily", amount: 100 } },
      ratelimits: [{ name: "requests", limit: 10, duration: 60000, autoApply: true }],
      enabled: true,
    });
    const { keyId, key } = created.data;
    expect(key.startsWith("sdk_")).toBe(true);

    const got = await unkey.keys.getKey({ keyId });
    expect(got.data).toMatchObject({
      keyId,
      name: "sdk key",
      enabled: true,
      meta: { plan: "pro" },
      credits: { remaining: 100, refill: { interval: "daily", amount: 100 } },
      roles: ["sdk_reader"],
      identity: { externalId: "sdk_key_owner" },
    });
    expect(got.data.permissions).toEqual(["docs.read", "docs.write"]);
    expect((await unkey.keys.whoami({ key })).data.keyId).toBe(keyId);

    const list = await unkey.apis.listKeys({ apiId });
    expect(list.result.data.map((k) => k.keyId)).toEqual([keyId]);

    await unkey.keys.updateKey({ keyId, name: "renamed", enabled: false });
    const credits = await unkey.keys.updateCredits({ keyId, operation: "decrement", value: 10 });
    expect(credits.data.remaining).toBe(90);
    const unlimited = await unkey.keys.updateCredits({ keyId, operation: "set", value: null });
    expect(unlimited.data.remaining).toBeNull();

    const perms = await unkey.keys.addPermissions({ keyId, permissions: ["docs.share"] });
    expect(perms.data.map((p) => p.slug)).toContain("docs.share");
    const roles = await unkey.keys.setRoles({ keyId, roles: [] });
    expect(roles.data).toEqual([]);

    const rerolled = await unkey.keys.rerollKey({ keyId, expiration: 0 });
    expect(rerolled.data.keyId).not.toBe(keyId);
    await unkey.keys.deleteKey({ keyId: rerolled.data.keyId });
    const gone = await unkey.keys.getKey({ keyId: rerolled.data.keyId }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(errors.NotFoundErrorResponse);
  });

  it("updates credits with refill null: the refill goes, remaining is set", async () => {
    const apiId = (await unkey.apis.createApi({ name: "sdk credits" })).data.apiId;
    const { keyId } = (
      await unkey.keys.createKey({
        apiId,
        credits: { remaining: 3, refill: { interval: "daily", amount: 10 } },
      })
    ).data;
    await unkey.keys.updateKey({ keyId, credits: { remaining: 5, refill: null } });
    const got = await unkey.keys.getKey({ keyId });
    expect(got.data.credits).toEqual({ remaining: 5 });
    // Only the refill named: it goes, and the balance stays (never unlimited).
    await unkey.keys.updateKey({ keyId, credits: { refill: null } });
    expect((await unkey.keys.getKey({ keyId })).data.credits).toEqual({ remaining: 5 });
  });

  it("migrates keys and reports failed as an array", async () => {
    const apiId = (await unkey.apis.createApi({ name: "sdk migrate" })).data.apiId;
    const hash = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const first = await unkey.keys.migrateKeys({
      migrationId: "sdk_migration",
      apiId,
      keys: [{ hash }],
    });
    expect(first.data.migrated).toHaveLength(1);
    expect(first.data.failed).toEqual([]);
    const again = await unkey.keys.migrateKeys({
      migrationId: "sdk_migration",
      apiId,
      keys: [{ hash }],
    });
    expect(again.data.failed).toEqual([hash]);
  });
});
