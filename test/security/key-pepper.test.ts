import { createHash } from "node:crypto";
import { inspect } from "node:util";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { KeyHashing } from "../../src/domain/key-hashing.js";
import { hashKey } from "../../src/domain/key-material.js";
import { randomString } from "../../src/domain/random.js";
import { createTestDatabase } from "../harness/database.js";
import { callJson } from "../harness/doors.js";
import { currentEngine } from "../harness/engine.js";
import { loopbackConfig, useServer } from "../harness/server.js";

const OLD = `old_pepper_${randomString(32)}`;
const CURRENT = `current_pepper_${randomString(32)}`;

/** The server's hashing, counting how often a lookup computes the stored forms (HMACs). */
class CountingHashing extends KeyHashing {
  lookups = 0;
  override candidates(secret: string, plain: string): string[] {
    this.lookups++;
    return super.candidates(secret, plain);
  }
}
const hashing = new CountingHashing(CURRENT, [OLD]);
const s = useServer({ config: { keyHashing: hashing } });

async function call(procedure: string, body: unknown, auth?: string | null) {
  const res = await s.call("json", procedure, body, auth);
  expect(res.status, `${procedure}: ${JSON.stringify(res.error)}`).toBe(200);
  return res.data;
}

async function storedHash(table: "keys" | "root_keys", id: string): Promise<string | undefined> {
  const rows = await s.db.query<{ hash: string }>(`select hash from ${table} where id = $1`, [id]);
  return rows[0]?.hash;
}

/** Stores a key's hash as another configuration would have, as the row would hold it. */
async function restore(table: "keys" | "root_keys", id: string, hash: string) {
  await s.db.query(`update ${table} set hash = $2 where id = $1`, [id, hash]);
  s.app.deps.caches.keys.clear();
  s.app.deps.caches.keyAliases.clear();
  s.app.deps.caches.rootKeys.clear();
}

async function until(what: string, check: () => Promise<boolean>) {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("KEY_HASH_PEPPER", () => {
  it("stores keys, rerolled keys and root keys made under it as HMAC, never as SHA-256", async () => {
    const apiId = (await call("apis.createApi", { name: "peppered" })).apiId;
    const created = await call("keys.createKey", { apiId, prefix: "pk" });
    const rerolled = await call("keys.rerollKey", { keyId: created.keyId, expiration: 60_000 });
    const root = await s.seed.rootKeyWithId(["api.*.read_api"]);
    const current = new KeyHashing(CURRENT);
    expect(await storedHash("keys", created.keyId)).toBe(current.stored(created.key));
    expect(await storedHash("keys", rerolled.keyId)).toBe(current.stored(rerolled.key));
    expect(await storedHash("root_keys", root.id)).toBe(current.stored(root.secret));
    const all = await s.db.query<{ hash: string }>(
      "select hash from keys union all select hash from root_keys",
    );
    for (const secret of [created.key, rerolled.key, root.secret]) {
      expect(current.stored(secret)).toMatch(/^hmac-sha256:[\w-]{8}:[A-Za-z0-9+/]{43}=$/);
      expect(all.map((r) => r.hash)).not.toContain(hashKey(secret));
    }
    for (const key of [created.key, rerolled.key]) {
      expect((await call("keys.verifyKey", { key })).valid).toBe(true);
    }
    expect((await s.call("json", "apis.getApi", { apiId }, root.secret)).status).toBe(200);
  });

  it("keeps verifying keys stored before it and migrated keys, as they are stored", async () => {
    const apiId = (await call("apis.createApi", { name: "before" })).apiId;
    const before = await call("keys.createKey", { apiId });
    await restore("keys", before.keyId, hashKey(before.key));
    const legacy = `legacy_${randomString(24)}`;
    const hex = createHash("sha256").update(legacy).digest("hex");
    await call("keys.migrateKeys", { migrationId: "pepper", apiId, keys: [{ hash: hex }] });
    for (const key of [before.key, legacy]) {
      expect((await call("keys.verifyKey", { key })).valid, key).toBe(true);
      expect((await call("keys.whoami", { key })).keyId).toBeDefined();
    }
    // Plain SHA-256 stays plain: a migrated hash keeps the form it was imported in.
    expect(await storedHash("keys", before.keyId)).toBe(hashKey(before.key));
    const migrated = await s.db.query("select 1 from keys where hash = $1", [hashKey(legacy)]);
    expect(migrated).toHaveLength(1);
  });

  it("verifies keys under a previous pepper and moves them to the current one", async () => {
    const apiId = (await call("apis.createApi", { name: "rotation" })).apiId;
    const k = await call("keys.createKey", { apiId });
    const root = await s.seed.rootKeyWithId(["api.*.read_api"]);
    const old = new KeyHashing(OLD);
    await restore("keys", k.keyId, old.stored(k.key));
    await restore("root_keys", root.id, old.stored(root.secret));
    expect((await call("keys.verifyKey", { key: k.key })).valid).toBe(true);
    expect((await s.call("json", "apis.getApi", { apiId }, root.secret)).status).toBe(200);
    const current = new KeyHashing(CURRENT);
    await until(
      "the key moved",
      async () => (await storedHash("keys", k.keyId)) === current.stored(k.key),
    );
    await until(
      "the root key moved",
      async () => (await storedHash("root_keys", root.id)) === current.stored(root.secret),
    );
    // Moved, it verifies on a node that no longer knows the old pepper.
    const strict = new KeyHashing(CURRENT);
    const found = await s.db.query("select 1 from keys where hash = any($1::text[])", [
      strict.candidates(k.key, hashKey(k.key)),
    ]);
    expect(found).toHaveLength(1);
    expect((await call("keys.verifyKey", { key: k.key })).valid).toBe(true);
  });

  it("cannot verify a key hashed under a pepper the server does not have (a lost pepper)", async () => {
    const apiId = (await call("apis.createApi", { name: "lost" })).apiId;
    const k = await call("keys.createKey", { apiId });
    await restore("keys", k.keyId, new KeyHashing(`lost_pepper_${randomString(32)}`).stored(k.key));
    expect((await call("keys.verifyKey", { key: k.key })).code).toBe("NOT_FOUND");
  });

  it("costs no HMAC on a cache hit, known key or unknown", async () => {
    const apiId = (await call("apis.createApi", { name: "hot" })).apiId;
    const k = await call("keys.createKey", { apiId });
    const unknown = `hot_${randomString(22)}`;
    for (const key of [k.key, unknown]) {
      const before = hashing.lookups;
      await call("keys.verifyKey", { key });
      expect(hashing.lookups - before, "a miss computes the stored forms once").toBe(1);
      for (let i = 0; i < 5; i++) await call("keys.verifyKey", { key });
      expect(hashing.lookups - before, "hits compute none").toBe(1);
    }
  });

  it("drops a cached record at once when its key changes, whatever form it is stored in", async () => {
    const apiId = (await call("apis.createApi", { name: "changes" })).apiId;
    const peppered = await call("keys.createKey", { apiId });
    const plain = await call("keys.createKey", { apiId });
    await restore("keys", plain.keyId, hashKey(plain.key));
    const old = await call("keys.createKey", { apiId });
    await restore("keys", old.keyId, new KeyHashing(OLD).stored(old.key));
    for (const k of [peppered, plain, old]) {
      expect((await call("keys.verifyKey", { key: k.key })).valid).toBe(true);
      await call("keys.updateKey", { keyId: k.keyId, enabled: false });
      expect((await call("keys.verifyKey", { key: k.key })).code, k.keyId).toBe("DISABLED");
    }
  });
});

describe("the pepper's secrecy", () => {
  it("is at least 32 characters, and a bad one is a config error that does not show it", () => {
    const short = "short_pepper_value";
    for (const env of [
      { KEY_HASH_PEPPER: short },
      { KEY_HASH_PEPPER_PREVIOUS: `${CURRENT},${short}` },
      { KEY_HASH_PEPPER: `${CURRENT} with space` },
    ]) {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect(String(error)).toMatch(/KEY_HASH_PEPPER/);
      expect(String(error)).not.toContain(short);
      expect(String(error)).not.toContain(CURRENT);
    }
    const five = Array.from({ length: 5 }, () => `p_${randomString(40)}`).join(",");
    expect(() => loadConfig({ KEY_HASH_PEPPER_PREVIOUS: five })).toThrow(ConfigError);
    const config = loadConfig({ KEY_HASH_PEPPER: CURRENT, KEY_HASH_PEPPER_PREVIOUS: OLD });
    for (const shown of [JSON.stringify(config), inspect(config, { depth: 10 })]) {
      expect(shown).not.toContain(CURRENT);
      expect(shown).not.toContain(OLD);
    }
  });

  it("never appears in the logs, at trace level, while keys are made, verified and moved", async () => {
    let text = "";
    const sink = {
      write(chunk: string) {
        text += chunk;
      },
    };
    const database = await createTestDatabase(currentEngine());
    const rootKey = `pepper_root_${randomString(24)}`;
    const config = loopbackConfig(
      { grpcPort: 0, rootKey },
      { KEY_HASH_PEPPER: CURRENT, KEY_HASH_PEPPER_PREVIOUS: OLD },
    );
    const app = await startApp({ config, db: database.db, log: pino({ level: "trace" }, sink) });
    try {
      const auth = { authorization: `Bearer ${rootKey}` };
      const apiId = (await callJson(app.url, "apis.createApi", { name: "logs" }, auth)).data.apiId;
      const k = (await callJson(app.url, "keys.createKey", { apiId }, auth)).data;
      await database.db.query("update keys set hash = $2 where id = $1", [
        k.keyId,
        new KeyHashing(OLD).stored(k.key),
      ]);
      app.deps.caches.keys.clear();
      const verified = await callJson(app.url, "keys.verifyKey", { key: k.key }, {});
      expect(verified.data.valid).toBe(true);
      await callJson(app.url, "keys.verifyKey", { key: `x_${randomString(20)}` }, {});
    } finally {
      await app.stop();
      await database.drop();
    }
    expect(text).toContain('"procedure":"keys.verifyKey"');
    expect(text).not.toContain(CURRENT);
    expect(text).not.toContain(OLD);
  });
});
