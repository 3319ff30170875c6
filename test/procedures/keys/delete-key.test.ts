import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;

describe.each(DOORS)("keys.deleteKey via %s", (door) => {
  it("soft-deletes: gone from every procedure, hash reserved, second delete 404", async () => {
    const k = await s.seed.key();
    const res = await s.call(door, "keys.deleteKey", { keyId: k.keyId });
    expect(res).toMatchObject({ status: 200, data: {} });
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId })).status).toBe(404);
    expect((await s.call(door, "keys.whoami", { key: k.key })).status).toBe(404);
    expect((await s.call(door, "apis.listKeys", { apiId: k.apiId })).data).toEqual([]);
    expect((await s.call(door, "keys.deleteKey", { keyId: k.keyId })).status).toBe(404);
    const hash = createHash("sha256").update(k.key).digest("base64");
    const migrate = await s.call(door, "keys.migrateKeys", {
      migrationId: "mig",
      apiId: k.apiId,
      keys: [{ hash }],
    });
    expect(migrate.data).toEqual({ migrated: [], failed: [hash] });
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1",
      [res.requestId],
    );
    expect(audit).toEqual([{ event: "key.delete" }]);
  });

  it("deletes permanently with its links and rate limits", async () => {
    const k = await s.seed.key({
      permissions: ["perm.del.x"],
      ratelimits: [{ name: "rrr", limit: 1, duration: 1000 }],
    });
    expect((await s.call(door, "keys.deleteKey", { keyId: k.keyId, permanent: true })).status).toBe(
      200,
    );
    expect(await s.db.query("select 1 from keys where id = $1", [k.keyId])).toEqual([]);
    expect(await s.db.query("select 1 from keys_permissions where key_id = $1", [k.keyId])).toEqual(
      [],
    );
    expect(await s.db.query("select 1 from ratelimits where key_id = $1", [k.keyId])).toEqual([]);
  });

  it("answers 403 naming delete_key, and 404 for another workspace's key", async () => {
    const k = await s.seed.key();
    const res = await s.call(
      door,
      "keys.deleteKey",
      { keyId: k.keyId },
      await s.seed.rootKey(["api.*.update_key"]),
    );
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain(`api.${k.apiId}.delete_key`);
    const ws = await s.seed.workspace();
    const foreign = await s.seed.key(
      { apiId: await s.seed.api(ws) },
      await s.seed.rootKey(["*.*.*"], ws),
    );
    expect((await s.call(door, "keys.deleteKey", { keyId: foreign.keyId })).status).toBe(404);
  });
});

describe.each(DOORS)("keys.rerollKey via %s", (door) => {
  it("issues a new key with the same settings, keeping an underscored prefix whole", async () => {
    const role = `reroll_role_${++n}`;
    await s.call("json", "permissions.createRole", { name: role });
    const k = await s.seed.key({
      prefix: "sk_live",
      byteLength: 24,
      name: "rolled",
      externalId: `reroll_${n}`,
      meta: { a: 1 },
      expires: 4102444800000,
      roles: [role],
      permissions: ["reroll.perm"],
      ratelimits: [{ name: "rrr", limit: 3, duration: 1000 }],
      enabled: false,
    });
    const res = await s.call(door, "keys.rerollKey", { keyId: k.keyId, expiration: 60_000 });
    expect(res.status).toBe(200);
    expect(res.data.keyId).not.toBe(k.keyId);
    expect(res.data.key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]{30,34}$/);
    const old = (await s.call(door, "keys.getKey", { keyId: k.keyId })).data;
    const fresh = (await s.call(door, "keys.getKey", { keyId: res.data.keyId })).data;
    expect(old.expires).toBe(s.clock.now() + 60_000);
    const same = (r: Record<string, unknown>) => ({
      ...r,
      keyId: undefined,
      start: undefined,
      createdAt: undefined,
      updatedAt: undefined,
      expires: undefined,
      ratelimits: (r.ratelimits as { name: string }[]).map((x) => x.name),
    });
    expect(same(fresh)).toEqual(same(old));
    expect(fresh.expires).toBe(4102444800000);
    expect(fresh.start).toBe(res.data.key.slice(0, "sk_live_".length + 4));
  });

  it("lets the old key spend the new key's balance: one balance, not two", async () => {
    const k = await s.seed.key({ credits: { remaining: 10 } });
    const res = await s.call(door, "keys.rerollKey", { keyId: k.keyId, expiration: 3_600_000 });
    const fresh = res.data.keyId;
    await s.call(door, "keys.updateCredits", { keyId: k.keyId, operation: "decrement", value: 3 });
    expect((await s.call(door, "keys.getKey", { keyId: fresh })).data.credits.remaining).toBe(7);
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId })).data.credits.remaining).toBe(7);
    await s.call(door, "keys.updateCredits", { keyId: fresh, operation: "decrement", value: 2 });
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId })).data.credits.remaining).toBe(5);
  });

  it("never extends the old key's expiry, and expires it now with expiration 0", async () => {
    const soon = s.clock.now() + 1000;
    const k = await s.seed.key({ expires: soon });
    await s.call(door, "keys.rerollKey", { keyId: k.keyId, expiration: 86_400_000 });
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId })).data.expires).toBe(soon);
    const k2 = await s.seed.key();
    await s.call(door, "keys.rerollKey", { keyId: k2.keyId, expiration: 0 });
    expect((await s.call(door, "keys.getKey", { keyId: k2.keyId })).data.expires).toBe(
      s.clock.now(),
    );
  });

  it("answers 404, 400 and 403 as it should", async () => {
    expect(
      (await s.call(door, "keys.rerollKey", { keyId: "key_none", expiration: 0 })).status,
    ).toBe(404);
    const k = await s.seed.key();
    expect((await s.call(door, "keys.rerollKey", { keyId: k.keyId, expiration: -1 })).status).toBe(
      400,
    );
    const res = await s.call(
      door,
      "keys.rerollKey",
      { keyId: k.keyId, expiration: 0 },
      await s.seed.rootKey(["api.*.update_key"]),
    );
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain(`api.${k.apiId}.create_key`);
  });
});

describe.each(DOORS)("keys.migrateKeys via %s", (door) => {
  const sha = (v: string, enc: "hex" | "base64") => createHash("sha256").update(v).digest(enc);

  it("imports keys by base64 or hex hash; whoami finds them by their secret", async () => {
    const apiId = await s.seed.api();
    const a = `legacy_a_${door}_${++n}`;
    const b = `legacy_b_${door}_${n}`;
    const res = await s.call(door, "keys.migrateKeys", {
      migrationId: "from_legacy",
      apiId,
      keys: [
        {
          hash: sha(a, "base64"),
          name: "A",
          credits: { remaining: 5 },
          permissions: ["legacy.read"],
        },
        {
          hash: sha(b, "hex"),
          externalId: `legacy_user_${n}`,
          ratelimits: [{ name: "rrr", limit: 1, duration: 1000 }],
        },
        { hash: sha(a, "hex") },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.data.migrated).toHaveLength(2);
    expect(res.data.failed).toEqual([sha(a, "hex")]);
    const who = await s.call(door, "keys.whoami", { key: a });
    expect(who.data).toMatchObject({
      keyId: res.data.migrated[0].keyId,
      start: "",
      name: "A",
      credits: { remaining: 5 },
      permissions: ["legacy.read"],
    });
    expect((await s.call(door, "keys.whoami", { key: b })).data.identity.externalId).toBe(
      `legacy_user_${n}`,
    );
  });

  it("answers failed: [] when nothing failed, unknown roles with 404 writing nothing, bad hashes with 400", async () => {
    const apiId = await s.seed.api();
    const ok = await s.call(door, "keys.migrateKeys", {
      migrationId: "m1x",
      apiId,
      keys: [{ hash: sha(`ok_${++n}`, "hex") }],
    });
    expect(ok.data.failed).toEqual([]);
    const before = await s.snapshot();
    const roles = await s.call(door, "keys.migrateKeys", {
      migrationId: "m1x",
      apiId,
      keys: [{ hash: sha(`r_${++n}`, "hex"), roles: ["no_role_here"] }],
    });
    expect(roles.status).toBe(404);
    expect(await s.changesSince(before)).toEqual({});
    const bad = await s.call(door, "keys.migrateKeys", {
      migrationId: "m1x",
      apiId,
      keys: [{ hash: "z".repeat(64) }],
    });
    expect(bad.status).toBe(400);
    expect(bad.error?.errors?.[0]?.location).toBe("/keys/0/hash");
    const tooMany = await s.call(door, "keys.migrateKeys", {
      migrationId: "m1x",
      apiId,
      keys: Array.from({ length: 101 }, (_, i) => ({ hash: sha(`many_${i}`, "hex") })),
    });
    expect(tooMany.error?.errors?.[0]?.location).toBe("/keys");
  });
});
