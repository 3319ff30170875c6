import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { KeyHashing } from "../../src/domain/key-hashing.js";
import { hashKey } from "../../src/domain/key-material.js";
import { randomString } from "../../src/domain/random.js";
import type { Queryable } from "../../src/storage/db.js";
import { type KeyScope, keyRecordByHashes } from "../../src/storage/queries/key-records.js";
import { createTestDatabase } from "../harness/database.js";
import { callConnect, callJson, createTransports } from "../harness/doors.js";
import { currentEngine } from "../harness/engine.js";
import { loopbackConfig, useServer } from "../harness/server.js";

const s = useServer();

const sha256 = (secret: string, encoding: "base64" | "hex") =>
  createHash("sha256").update(secret).digest(encoding);

/** A secret and the part of it after the prefix, which must not show up on its own either. */
function withRandomPart(secret: string): string[] {
  const random = secret.slice(secret.lastIndexOf("_") + 1);
  return random.length >= 12 ? [secret, random] : [secret];
}

describe("the database", () => {
  it("holds no plaintext key or root key in any text or JSON column of any table", async () => {
    const call = async (procedure: string, body: unknown, auth?: string | null) => {
      const res = await s.call("json", procedure, body, auth);
      expect(res.status, `${procedure}: ${JSON.stringify(res.error)}`).toBe(200);
      return res.data;
    };
    const apiId = (await call("apis.createApi", { name: "secrets" })).apiId;
    const identity = `secret_owner_${randomString(6)}`;
    const a = await call("keys.createKey", {
      apiId,
      prefix: "sk_live",
      name: "a",
      externalId: identity,
      meta: { note: "plain" },
      credits: { remaining: 100 },
      ratelimits: [{ name: "requests", limit: 100, duration: 60_000 }],
    });
    const b = await call("keys.createKey", { apiId, byteLength: 64 });
    const rerolled = await call("keys.rerollKey", { keyId: a.keyId, expiration: 60_000 });
    const legacyBase64 = `legacy_${randomString(24)}`;
    const legacyHex = `legacy_${randomString(24)}`;
    await call("keys.migrateKeys", {
      migrationId: "secrets",
      apiId,
      keys: [{ hash: sha256(legacyBase64, "base64") }, { hash: sha256(legacyHex, "hex") }],
    });
    const wrong = `sk_live_${randomString(22)}`;
    const otherRoot = await s.seed.rootKey(["api.*.verify_key", "api.*.read_key"]);
    const secrets = [a.key, b.key, rerolled.key, legacyBase64, legacyHex];
    for (const key of secrets) {
      expect((await call("keys.verifyKey", { key })).valid).toBe(true);
      expect((await call("keys.verifyKey", { key, tags: ["path=/x"] }, otherRoot)).valid).toBe(
        true,
      );
      await call("keys.whoami", { key });
    }
    expect((await call("keys.verifyKey", { key: wrong })).code).toBe("NOT_FOUND");
    await s.app.deps.events.flush();

    const columns = await s.db.query<{ table: string; column: string }>(
      `select table_name as table, column_name as column
       from information_schema.columns
       where table_schema = current_schema()
         and (data_type in ('text', 'character varying', 'character', 'json', 'jsonb')
           or (data_type = 'ARRAY' and udt_name in ('_text', '_varchar')))
       order by table_name, column_name`,
    );
    const dumped = columns.map((c) => `${c.table}.${c.column}`);
    // Not vacuous: the columns where a leak would land are among them.
    expect(dumped).toEqual(
      expect.arrayContaining([
        "keys.hash",
        "keys.start",
        "keys.meta",
        "root_keys.hash",
        "audit_logs.description",
      ]),
    );
    const values: string[] = [];
    for (const { table, column } of columns) {
      const rows = await s.db.query<{ v: string | null }>(
        `select "${column}"::text as v from "${table}" where "${column}" is not null`,
      );
      for (const r of rows) values.push(r.v as string);
    }
    const dump = values.join("\n");
    // Not vacuous either: the hashes are there, so the rows are.
    for (const key of secrets) expect(dump).toContain(hashKey(key));
    expect(dump).toContain(hashKey(otherRoot));
    // The environment's ROOT_KEY acts from memory: not even its hash is stored.
    expect(dump).not.toContain(hashKey(s.rootKey));
    for (const secret of [...secrets, wrong, s.rootKey, otherRoot].flatMap(withRandomPart)) {
      expect(dump).not.toContain(secret);
    }
  });
});

describe("the environment's ROOT_KEY", () => {
  it("acts from memory with *.*.*, audited under a fixed id, and has no root key row", async () => {
    const apiId = (await s.call("json", "apis.createApi", { name: "env root" })).data.apiId;
    const audit = await s.db.query<{ actor_id: string; workspace_id: string }>(
      "select actor_id, workspace_id from audit_logs where resource_id = $1",
      [apiId],
    );
    expect(audit).toEqual([{ actor_id: "rk_environment", workspace_id: s.workspaceId }]);
    const rows = await s.db.query("select 1 from root_keys where name = 'ROOT_KEY' or hash = $1", [
      hashKey(s.rootKey),
    ]);
    expect(rows).toEqual([]);
    // A near miss is still unknown: the comparison is of the whole hash.
    const near = `${s.rootKey.slice(0, -1)}${s.rootKey.endsWith("x") ? "y" : "x"}`;
    expect((await s.call("json", "apis.getApi", { apiId }, near)).status).toBe(401);
  });
});

describe("the logs", () => {
  it("never contain a key or root key, at trace level, whatever the outcome", async () => {
    let text = "";
    const sink = {
      write(chunk: string) {
        text += chunk;
      },
    };
    const database = await createTestDatabase(currentEngine());
    const rootKey = `log_root_${randomString(24)}`;
    const app = await startApp({
      config: loopbackConfig({ grpcPort: 0, rootKey }),
      db: database.db,
      log: pino({ level: "trace" }, sink),
    });
    const secrets = [rootKey];
    try {
      const transports = createTransports(app.url, `http://127.0.0.1:${app.grpcPort}`);
      const root = { authorization: `Bearer ${rootKey}` };
      const json = (procedure: string, body: unknown, headers: Record<string, string> = root) =>
        callJson(app.url, procedure, body, headers);
      const raw = (path: string, body: string) =>
        fetch(`${app.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...root },
          body,
        }).then((r) => r.text());

      const apiId = (await json("apis.createApi", { name: "logged" })).data.apiId;
      const created = await json("keys.createKey", { apiId, prefix: "logsk" });
      const key: string = created.data.key;
      const rerolled: string = (
        await json("keys.rerollKey", { keyId: created.data.keyId, expiration: 60_000 })
      ).data.key;
      const legacy = `legacy_${randomString(24)}`;
      await json("keys.migrateKeys", {
        migrationId: "logs",
        apiId,
        keys: [{ hash: sha256(legacy, "base64") }],
      });
      const wrong = `logsk_${randomString(22)}`;
      const badRoot = `bad_root_${randomString(24)}`;
      secrets.push(key, rerolled, legacy, wrong, badRoot);
      const unknownRoot = { authorization: `Bearer ${badRoot}` };
      expect((await json("keys.verifyKey", { key }, unknownRoot)).status).toBe(401);

      for (const k of [key, rerolled, legacy, wrong]) {
        expect((await json("keys.verifyKey", { key: k }, {})).status).toBe(200);
        expect((await json("keys.whoami", { key: k })).status).toBeLessThan(500);
        for (const door of ["connect", "grpc"] as const) {
          const res = await callConnect(transports[door], "keys.verifyKey", { key: k }, root);
          expect(res.status).toBe(200);
        }
      }
      // Refusals that carry the secret in the request.
      expect((await json("apis.createApi", { name: "x" }, { authorization: badRoot })).status).toBe(
        401,
      );
      expect((await json("keys.verifyKey", { key, permissions: "(((" })).status).toBe(400);
      expect((await json("keys.verifyKey", { key, bogus: key })).status).toBe(400);
      expect(await raw("/v2/keys.verifyKey", `{"key":"${key}"`)).toContain("not valid JSON");
      expect(await raw("/latchkey.v2.KeysService/VerifyKey", `{"key":"${key}","x":1}`)).toContain(
        "invalid_argument",
      );
      await app.deps.events.flush();
    } finally {
      await app.stop();
      await database.drop();
    }
    // Not vacuous: there is a debug line per call, with the procedure.
    expect(text).toContain('"procedure":"keys.verifyKey"');
    for (const secret of secrets.flatMap(withRandomPart)) expect(text).not.toContain(secret);
  });
});

describe("verification", () => {
  it.runIf(currentEngine() === "postgres")(
    "finds a key by its hash through an index, scoped to its workspace",
    async () => {
      // Hashes are unique per workspace: the index leads with the workspace, then the hash.
      const index = "keys_workspace_hash";
      const indexes = await s.db.query<{ def: string }>(
        "select indexdef as def from pg_indexes where tablename = 'keys' and indexname = $1",
        [index],
      );
      expect(indexes[0]?.def).toMatch(
        /CREATE UNIQUE INDEX keys_workspace_hash ON \S+ USING btree \(workspace_id, hash\)/,
      );

      // Enough keys that a sequential scan would not be the cheaper plan by accident.
      const apiId = (await s.call("json", "apis.createApi", { name: "explain" })).data.apiId;
      for (let batch = 0; batch < 10; batch++) {
        const keys = Array.from({ length: 100 }, () => ({
          hash: sha256(randomString(24), "base64"),
        }));
        const res = await s.call("json", "keys.migrateKeys", {
          migrationId: "explain",
          apiId,
          keys,
        });
        expect(res.status).toBe(200);
      }
      await s.db.query("analyze keys");

      // The very statement verification runs, captured from the storage function.
      let captured: { text: string; params: readonly unknown[] } | undefined;
      const capture: Queryable = {
        async query<T>(text: string, params: readonly unknown[] = []): Promise<T[]> {
          captured = { text, params };
          return [];
        },
        exec: () => Promise.reject(new Error("not used")),
        copyCsv: () => Promise.reject(new Error("not used")),
      };
      // Without a pepper one stored form; under a pepper with a previous one, three: each
      // looked up through the unique index, all in one statement.
      // In a workspace (with a root key) or in an API (without one), alike.
      const peppered = new KeyHashing("p".repeat(32), ["q".repeat(32)]);
      const scopes: KeyScope[] = [{ workspaceId: s.workspaceId }, { apiId }];
      for (const [hashing, scope] of [new KeyHashing(), peppered].flatMap((h) =>
        scopes.map((sc) => [h, sc] as const),
      )) {
        const candidates = hashing.candidates("sk_any_key", hashKey("sk_any_key"));
        await keyRecordByHashes(capture, scope, candidates);
        expect(captured?.params).toEqual([candidates, scope.apiId ?? scope.workspaceId]);
        const plan = await s.db.query<{ "QUERY PLAN": unknown }>(
          `explain (format json) ${captured?.text}`,
          captured?.params,
        );
        const nodes = planNodes(plan[0]?.["QUERY PLAN"]);
        // The scan of k is an index scan, or a bitmap heap scan over a bitmap index scan.
        const onKeys = nodes.filter((n) => n["Relation Name"] === "keys" && n.Alias === "k");
        expect(onKeys.map((n) => n["Node Type"])).not.toContain("Seq Scan");
        // The workspace's unique index, or the index of hashes alone that secret-scanning
        // reports use: either probes by hash, and the statement is scoped (params above).
        const probe = nodes.find(
          (n) => n["Index Name"] === index || n["Index Name"] === "keys_hash",
        );
        expect(probe?.["Node Type"], `${candidates.length} forms`).toMatch(
          /^(Index Scan|Bitmap Index Scan)$/,
        );
        expect(String(probe?.["Index Cond"])).toMatch(/\(hash = ANY /);
      }
    },
  );

  it("compares secrets only as hashes: the plaintext key goes only into the hashing", () => {
    const read = (path: string) =>
      readFileSync(new URL(`../../src/${path}`, import.meta.url), "utf8");
    const sources = {
      "services/keys/verify-key.ts":
        /hashKey\(req\.key\)|verificationRecord\(deps, scope, req\.key,/g,
      "services/keys/whoami.ts": /hashKey\(req\.key\)|candidates\(req\.key,/g,
    };
    for (const [path, allowed] of Object.entries(sources)) {
      const source = read(path);
      const uses = source.match(/req\.key\b/g) ?? [];
      // Every mention of the plaintext is an argument of the hashing.
      expect(uses.length, path).toBeGreaterThan(0);
      expect(source.match(allowed)?.length, path).toBe(uses.length);
      expect(source, path).not.toMatch(
        /timingSafeEqual|localeCompare|\.key\s*[!=]==|[!=]==\s*req\./,
      );
    }
    // The lookup takes the secret only to hash it.
    const lookup = read("services/keys/verification-record.ts")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/\/\/.*$/gm, "");
    const hashed = lookup.match(/hashing\.(candidates|stored)\(secret\b/g)?.length ?? 0;
    expect(hashed).toBeGreaterThan(0);
    // The parameter itself, and its uses as the argument of the hashing.
    expect(lookup.match(/\bsecret\b/g)?.length).toBe(hashed + 1);
    const records = read("storage/queries/key-records.ts");
    // The hashes are a bound parameter of the where clause; nothing compares them in JS.
    expect(records).toMatch(/and k\.hash = any\(\$1::text\[\]\)/);
    expect(records).not.toMatch(/hash\w*\s*[!=]==|[!=]==\s*\w*hash|timingSafeEqual/i);
  });
});

/** Every node of an EXPLAIN (FORMAT JSON) plan, depth first. */
function planNodes(explained: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const walk = (node: Record<string, unknown>) => {
    out.push(node);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  const root = (Array.isArray(explained) ? explained[0] : explained) as {
    Plan: Record<string, unknown>;
  };
  walk(root.Plan);
  return out;
}
