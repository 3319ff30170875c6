import { createHash, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { currentEngine } from "../../harness/engine.js";
import { startNode } from "../../harness/processes.js";
import { DOORS, type TestDoor, useServer } from "../../harness/server.js";

// One instance serves several API owners (workspaces), who must never accept each other's
// keys. A verification looks for its key in one tenant only: the API it names (apiId), else
// the root key's workspace, else the instance's only workspace. Without a root key and
// without apiId, an instance of several workspaces answers 401. Key hashes are unique per
// workspace: the same secret may be a key of two workspaces, each verifying with its own
// record, and migrateKeys never tells one tenant what another holds.

const sha256Hex = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

/** The verifications a node stored: header-less ones that found nothing must add none. */
async function storedVerifications(s: ReturnType<typeof useServer>): Promise<number> {
  expect(await s.app.deps.events.flush()).toBe(true);
  const [row] = await s.db.query<{ n: number }>("select count(*)::int as n from key_verifications");
  return row?.n ?? 0;
}

describe("keys.verifyKey on an instance of two workspaces", () => {
  const s = useServer();
  /** Workspace B: another tenant with its own root key, API and key. */
  const b = { workspaceId: "", rootKey: "", apiId: "", keyId: "", key: "" };
  beforeAll(async () => {
    b.workspaceId = await s.seed.workspace();
    b.rootKey = await s.seed.rootKey(["*.*.*"], b.workspaceId);
    b.apiId = await s.seed.api(b.workspaceId);
    const k = await s.seed.key({ apiId: b.apiId, meta: { tenant: "b" } }, b.rootKey);
    b.keyId = k.keyId;
    b.key = k.key;
  });

  describe.each(DOORS)("via %s", (door: TestDoor) => {
    const verify = (body: Record<string, unknown>, auth: string | null = null) =>
      s.call(door, "keys.verifyKey", body, auth);

    it("never verifies another workspace's key header-less with this workspace's apiId", async () => {
      const apiA = await s.seed.api();
      const res = await verify({ key: b.key, apiId: apiA });
      expect(res.status).toBe(200);
      expect(res.data).toEqual({ valid: false, code: "NOT_FOUND" });
    });

    it("never verifies another workspace's key with this workspace's root key, with or without that key's apiId", async () => {
      for (const body of [{ key: b.key }, { key: b.key, apiId: b.apiId }]) {
        const res = await verify(body, s.rootKey);
        expect(res.status).toBe(200);
        expect(res.data).toEqual({ valid: false, code: "NOT_FOUND" });
      }
    });

    it("answers 401 header-less without apiId, saying to send a root key or apiId, known key or not", async () => {
      for (const key of [b.key, `sk_unknown_${randomUUID()}`]) {
        const res = await verify({ key });
        expect(res.status).toBe(401);
        expect(res.error?.code).toBe("err:svc:authentication:missing");
        expect(res.error?.detail).toContain("root key");
        expect(res.error?.detail).toContain("'apiId'");
      }
    });

    it("verifies a key header-less with the apiId of its own API", async () => {
      const res = await verify({ key: b.key, apiId: b.apiId });
      expect(res.status).toBe(200);
      expect(res.data).toMatchObject({ valid: true, code: "VALID", keyId: b.keyId });
      expect(res.data.meta).toEqual({ tenant: "b" });
    });

    it("answers NOT_FOUND for an unknown or malformed apiId, and 400 for an empty one", async () => {
      const unknown = ["api_0000000000000000", "not an id: ' or 1=1 --", b.workspaceId];
      for (const apiId of [...unknown, `w:${b.workspaceId}`]) {
        const res = await verify({ key: b.key, apiId });
        expect(res.status, apiId).toBe(200);
        expect(res.data, apiId).toEqual({ valid: false, code: "NOT_FOUND" });
      }
      const empty = await verify({ key: b.key, apiId: "" });
      expect(empty.status).toBe(400);
      expect(empty.error?.errors?.[0]?.location).toBe("/apiId");
    });

    it("with a root key and apiId, verifies only a key of that API", async () => {
      const k = await s.seed.key();
      const otherApi = await s.seed.api();
      for (const auth of [s.rootKey, null]) {
        expect((await verify({ key: k.key, apiId: otherApi }, auth)).data).toEqual({
          valid: false,
          code: "NOT_FOUND",
        });
        expect((await verify({ key: k.key, apiId: k.apiId }, auth)).data.code).toBe("VALID");
      }
    });

    it("stores nothing for a header-less verification that finds nothing in its API", async () => {
      const apiA = await s.seed.api();
      const before = await storedVerifications(s);
      for (const body of [
        { key: b.key, apiId: apiA, tags: ["x"] },
        { key: `sk_unknown_${randomUUID()}`, apiId: b.apiId, tags: ["y"] },
        { key: b.key, apiId: "api_0000000000000000", tags: ["z"] },
      ]) {
        expect((await verify(body)).data.code).toBe("NOT_FOUND");
      }
      expect(await storedVerifications(s)).toBe(before);
    });
  });

  describe.each(DOORS)("the same secret migrated into both workspaces, via %s", (door) => {
    it("is refused as failed in its own workspace and imported in another", async () => {
      const hash = sha256Hex(`shared_${randomUUID()}`);
      const migrate = (apiId: string, rootKey: string) =>
        s.call(
          door,
          "keys.migrateKeys",
          { migrationId: "scope", apiId, keys: [{ hash }] },
          rootKey,
        );
      const first = await migrate(await s.seed.api(), s.rootKey);
      expect(first.data.failed).toEqual([]);
      // Another API of the same workspace: the hash is taken there.
      const again = await migrate(await s.seed.api(), s.rootKey);
      expect(again.status).toBe(200);
      expect(again.data).toEqual({ migrated: [], failed: [hash] });
      // Another workspace: nothing of the first one shows.
      const elsewhere = await migrate(b.apiId, b.rootKey);
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.data).toEqual({
        migrated: [{ hash, keyId: expect.any(String) }],
        failed: [],
      });
    });

    it("verifies in each scope with that workspace's own record, and invalidates only that one", async () => {
      const secret = `shared_${randomUUID()}`;
      const hash = sha256Hex(secret);
      const apiA = await s.seed.api();
      const migrate = async (apiId: string, rootKey: string, tenant: string) => {
        const res = await s.call(
          door,
          "keys.migrateKeys",
          { migrationId: "scope", apiId, keys: [{ hash, meta: { tenant } }] },
          rootKey,
        );
        expect(res.data.failed).toEqual([]);
        return res.data.migrated[0].keyId as string;
      };
      const idA = await migrate(apiA, s.rootKey, "a");
      const idB = await migrate(b.apiId, b.rootKey, "b");
      expect(idA).not.toBe(idB);
      const scopes = {
        a: [{ apiId: apiA, auth: null }, { auth: s.rootKey }, { apiId: apiA, auth: s.rootKey }],
        b: [{ apiId: b.apiId, auth: null }, { auth: b.rootKey }],
      };
      const seen = async (tenant: "a" | "b") => {
        const out: unknown[] = [];
        for (const { apiId, auth } of scopes[tenant] as { apiId?: string; auth: string | null }[]) {
          const body = apiId === undefined ? { key: secret } : { key: secret, apiId };
          const res = await s.call(door, "keys.verifyKey", body, auth);
          expect(res.status).toBe(200);
          out.push(res.data.valid ? { keyId: res.data.keyId, meta: res.data.meta } : res.data);
        }
        return out;
      };
      expect(await seen("a")).toEqual(Array(3).fill({ keyId: idA, meta: { tenant: "a" } }));
      expect(await seen("b")).toEqual(Array(2).fill({ keyId: idB, meta: { tenant: "b" } }));
      const who = async (rootKey: string) =>
        (await s.call(door, "keys.whoami", { key: secret }, rootKey)).data?.keyId;
      expect([await who(s.rootKey), await who(b.rootKey)]).toEqual([idA, idB]);

      // A change of A's key reaches every cached lookup of A, and none of B.
      const updated = await s.call(door, "keys.updateKey", { keyId: idA, meta: { tenant: "a2" } });
      expect(updated.status).toBe(200);
      expect(await seen("a")).toEqual(Array(3).fill({ keyId: idA, meta: { tenant: "a2" } }));
      expect(await seen("b")).toEqual(Array(2).fill({ keyId: idB, meta: { tenant: "b" } }));
      const deleted = await s.call(door, "keys.deleteKey", { keyId: idB }, b.rootKey);
      expect(deleted.status).toBe(200);
      expect(await seen("b")).toEqual(Array(2).fill({ valid: false, code: "NOT_FOUND" }));
      expect(await seen("a")).toEqual(Array(3).fill({ keyId: idA, meta: { tenant: "a2" } }));
    });
  });
});

describe("keys.verifyKey on an instance of one workspace", () => {
  const s = useServer();

  it("verifies header-less without apiId until a second workspace exists, then answers 401", async () => {
    const k = await s.seed.key({ meta: { only: true } });
    for (const door of DOORS) {
      const res = await s.call(door, "keys.verifyKey", { key: k.key }, null);
      expect(res.status, door).toBe(200);
      expect(res.data, door).toMatchObject({ valid: true, code: "VALID", keyId: k.keyId });
    }
    await s.seed.workspace();
    for (const door of DOORS) {
      const res = await s.call(door, "keys.verifyKey", { key: k.key }, null);
      expect(res.status, door).toBe(401);
      expect(res.error?.code, door).toBe("err:svc:authentication:missing");
      // Naming the key's API, or sending a root key, still verifies it.
      const scoped = await s.call(door, "keys.verifyKey", { key: k.key, apiId: k.apiId }, null);
      expect(scoped.data.code, door).toBe("VALID");
      expect((await s.call(door, "keys.verifyKey", { key: k.key })).data.code, door).toBe("VALID");
    }
  });
});

describe("the one workspace a node knows of", () => {
  const s = useServer();

  it("only ever narrows: a workspace added behind the bus's back is not searched, and a resync withdraws it", async () => {
    // Written straight into the database: no node hears of this workspace.
    await s.db.query(
      "insert into workspaces (id, name, created_at) values ('ws_behind_the_back', 'hidden', 0)",
    );
    const rootKey = await s.seed.rootKey(["*.*.*"], "ws_behind_the_back");
    const apiId = await s.seed.api("ws_behind_the_back");
    const hidden = await s.seed.key({ apiId }, rootKey);
    const own = await s.seed.key();
    const headerless = (key: string) => s.call("json", "keys.verifyKey", { key }, null);
    // Still scoped to the workspace it knew: that one's keys verify, the other's are not found.
    expect((await headerless(own.key)).data.code).toBe("VALID");
    expect((await headerless(hidden.key)).data).toEqual({ valid: false, code: "NOT_FOUND" });
    // A resync (what a node does when its LISTEN session comes back) counts again.
    s.app.deps.bus.applyLocal([{ kind: "all" }]);
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) status = (await headerless(own.key)).status;
    expect(status).toBe(401);
  });
});

// Several processes share one database only on PostgreSQL (LISTEN/NOTIFY invalidation).
describe.skipIf(currentEngine() !== "postgres")("another process", () => {
  const s = useServer();

  it("stops verifying header-less without apiId once a workspace is created elsewhere", async () => {
    const k = await s.seed.key();
    const node = await startNode({ databaseUrl: s.databaseUrl as string, rootKey: s.rootKey });
    try {
      const headerless = () =>
        fetch(`${node.url}/v2/keys.verifyKey`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ key: k.key }),
        });
      expect((await headerless()).status).toBe(200);
      await s.seed.workspace();
      const deadline = Date.now() + 10_000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) status = (await headerless()).status;
      expect(status).toBe(401);
    } finally {
      await node.stop();
    }
  });
});
