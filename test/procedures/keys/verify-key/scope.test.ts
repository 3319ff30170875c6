import { createHash, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { currentEngine } from "../../../harness/engine.js";
import { startNode } from "../../../harness/processes.js";
import { useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";
import { NOT_FOUND_ANSWER, statusOf, typedApiAt, type VerifyRequest, verifierOf } from "./calls.js";

// One instance serves several API owners (workspaces), who must never accept each other's
// keys. keys.verifyKey looks for its key in one tenant only: the API it names (apiId), else
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
  const verify = verifierOf(s);
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

  it("never verifies another workspace's key header-less with this workspace's apiId", async () => {
    const apiA = await s.seed.api();
    expect(await verify({ key: b.key, apiId: apiA })).toEqual(NOT_FOUND_ANSWER);
  });

  it("never verifies another workspace's key with this workspace's root key, with or without that key's apiId", async () => {
    for (const req of [{ key: b.key }, { key: b.key, apiId: b.apiId }]) {
      expect(await verify(req, s.rootKey)).toEqual(NOT_FOUND_ANSWER);
    }
  });

  it("answers 401 header-less without apiId, saying to send a root key or apiId, known key or not", async () => {
    for (const key of [b.key, `sk_unknown_${randomUUID()}`]) {
      const r = await refusal(s.as(null).keys.verifyKey({ key }));
      expect(r).toMatchObject({ status: 401, errorCode: "err:svc:authentication:missing" });
      expect(r.detail).toContain("root key");
      expect(r.detail).toContain("'apiId'");
    }
  });

  it("verifies a key header-less with the apiId of its own API", async () => {
    const data = await verify({ key: b.key, apiId: b.apiId });
    expect(data).toMatchObject({ valid: true, code: VerifyKeyCode.VALID, keyId: b.keyId });
    expect(data.meta).toEqual({ tenant: "b" });
  });

  it("answers NOT_FOUND for an unknown or malformed apiId, and 400 for an empty one", async () => {
    const unknown = ["api_0000000000000000", "not an id: ' or 1=1 --", b.workspaceId];
    for (const apiId of [...unknown, `w:${b.workspaceId}`]) {
      expect(await verify({ key: b.key, apiId }), apiId).toEqual(NOT_FOUND_ANSWER);
    }
    const r = await refusal(s.as(null).keys.verifyKey({ key: b.key, apiId: "" }));
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe("/apiId");
  });

  it("with a root key and apiId, verifies only a key of that API", async () => {
    const k = await s.seed.key();
    const otherApi = await s.seed.api();
    for (const auth of [s.rootKey, null]) {
      expect(await verify({ key: k.key, apiId: otherApi }, auth)).toEqual(NOT_FOUND_ANSWER);
      expect((await verify({ key: k.key, apiId: k.apiId }, auth)).code).toBe(VerifyKeyCode.VALID);
    }
  });

  it("stores nothing for a header-less verification that finds nothing in its API", async () => {
    const apiA = await s.seed.api();
    const before = await storedVerifications(s);
    for (const req of [
      { key: b.key, apiId: apiA, tags: ["x"] },
      { key: `sk_unknown_${randomUUID()}`, apiId: b.apiId, tags: ["y"] },
      { key: b.key, apiId: "api_0000000000000000", tags: ["z"] },
    ]) {
      expect((await verify(req)).code).toBe(VerifyKeyCode.NOT_FOUND);
    }
    expect(await storedVerifications(s)).toBe(before);
  });

  describe("the same secret migrated into both workspaces", () => {
    it("is refused as failed in its own workspace and imported in another", async () => {
      const hash = sha256Hex(`shared_${randomUUID()}`);
      const migrate = async (apiId: string, rootKey: string) =>
        (await s.as(rootKey).keys.migrateKeys({ migrationId: "scope", apiId, keys: [{ hash }] }))
          .data;
      expect((await migrate(await s.seed.api(), s.rootKey))?.failed).toEqual([]);
      // Another API of the same workspace: the hash is taken there.
      expect(await migrate(await s.seed.api(), s.rootKey)).toMatchObject({
        migrated: [],
        failed: [hash],
      });
      // Another workspace: nothing of the first one shows.
      expect(await migrate(b.apiId, b.rootKey)).toMatchObject({
        migrated: [{ hash, keyId: expect.any(String) }],
        failed: [],
      });
    });

    it("verifies in each scope with that workspace's own record, and invalidates only that one", async () => {
      const secret = `shared_${randomUUID()}`;
      const hash = sha256Hex(secret);
      const apiA = await s.seed.api();
      const migrate = async (apiId: string, rootKey: string, tenant: string) => {
        const res = await s.as(rootKey).keys.migrateKeys({
          migrationId: "scope",
          apiId,
          keys: [{ hash, meta: { tenant } }],
        });
        expect(res.data?.failed).toEqual([]);
        return res.data?.migrated[0]?.keyId as string;
      };
      const idA = await migrate(apiA, s.rootKey, "a");
      const idB = await migrate(b.apiId, b.rootKey, "b");
      expect(idA).not.toBe(idB);
      const scopes: Record<"a" | "b", { apiId?: string; auth: string | null }[]> = {
        a: [{ apiId: apiA, auth: null }, { auth: s.rootKey }, { apiId: apiA, auth: s.rootKey }],
        b: [{ apiId: b.apiId, auth: null }, { auth: b.rootKey }],
      };
      const seen = async (tenant: "a" | "b") => {
        const out: unknown[] = [];
        for (const { apiId, auth } of scopes[tenant]) {
          const req: VerifyRequest = apiId === undefined ? { key: secret } : { key: secret, apiId };
          const data = await verify(req, auth);
          out.push(data.valid ? { keyId: data.keyId, meta: data.meta } : VerifyKeyCode[data.code]);
        }
        return out;
      };
      expect(await seen("a")).toEqual(Array(3).fill({ keyId: idA, meta: { tenant: "a" } }));
      expect(await seen("b")).toEqual(Array(2).fill({ keyId: idB, meta: { tenant: "b" } }));
      const who = async (rootKey: string) =>
        (await s.as(rootKey).keys.whoami({ key: secret })).data?.keyId;
      expect([await who(s.rootKey), await who(b.rootKey)]).toEqual([idA, idB]);

      // A change of A's key reaches every cached lookup of A, and none of B.
      await s.api.keys.updateKey({ keyId: idA, meta: { tenant: "a2" } });
      expect(await seen("a")).toEqual(Array(3).fill({ keyId: idA, meta: { tenant: "a2" } }));
      expect(await seen("b")).toEqual(Array(2).fill({ keyId: idB, meta: { tenant: "b" } }));
      await s.as(b.rootKey).keys.deleteKey({ keyId: idB });
      expect(await seen("b")).toEqual(Array(2).fill("NOT_FOUND"));
      expect(await seen("a")).toEqual(Array(3).fill({ keyId: idA, meta: { tenant: "a2" } }));
    });
  });
});

describe("keys.verifyKey on an instance of one workspace", () => {
  const s = useServer();
  const verify = verifierOf(s);

  it("verifies header-less without apiId until a second workspace exists, then answers 401", async () => {
    const k = await s.seed.key({ meta: { only: true } });
    expect(await verify({ key: k.key })).toMatchObject({
      valid: true,
      code: VerifyKeyCode.VALID,
      keyId: k.keyId,
    });
    await s.seed.workspace();
    const r = await refusal(s.as(null).keys.verifyKey({ key: k.key }));
    expect(r).toMatchObject({ status: 401, errorCode: "err:svc:authentication:missing" });
    // Naming the key's API, or sending a root key, still verifies it.
    expect((await verify({ key: k.key, apiId: k.apiId })).code).toBe(VerifyKeyCode.VALID);
    expect((await verify({ key: k.key }, s.rootKey)).code).toBe(VerifyKeyCode.VALID);
  });
});

describe("the one workspace a node knows of", () => {
  const s = useServer();
  const verify = verifierOf(s);

  it("only ever narrows: a workspace added behind the bus's back is not searched, and a resync withdraws it", async () => {
    // Written straight into the database: no node hears of this workspace.
    await s.db.query(
      "insert into workspaces (id, name, created_at) values ('ws_behind_the_back', 'hidden', 0)",
    );
    const rootKey = await s.seed.rootKey(["*.*.*"], "ws_behind_the_back");
    const apiId = await s.seed.api("ws_behind_the_back");
    const hidden = await s.seed.key({ apiId }, rootKey);
    const own = await s.seed.key();
    // Still scoped to the workspace it knew: that one's keys verify, the other's are not found.
    expect((await verify({ key: own.key })).code).toBe(VerifyKeyCode.VALID);
    expect(await verify({ key: hidden.key })).toEqual(NOT_FOUND_ANSWER);
    // A resync (what a node does when its LISTEN session comes back) counts again.
    s.app.deps.bus.applyLocal([{ kind: "all" }]);
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline)
      status = await statusOf(s.as(null).keys.verifyKey({ key: own.key }));
    expect(status).toBe(401);
  });
});

// Several processes share one database only on PostgreSQL (LISTEN/NOTIFY invalidation).
describe.skipIf(currentEngine() !== "postgres")("keys.verifyKey on another process", () => {
  const s = useServer();

  it("stops verifying header-less without apiId once a workspace is created elsewhere", async () => {
    const k = await s.seed.key();
    const node = await startNode({ databaseUrl: s.databaseUrl as string, rootKey: s.rootKey });
    try {
      const headerless = () => statusOf(typedApiAt(node.url, null).keys.verifyKey({ key: k.key }));
      expect(await headerless()).toBe(200);
      await s.seed.workspace();
      const deadline = Date.now() + 10_000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) status = await headerless();
      expect(status).toBe(401);
    } finally {
      await node.stop();
    }
  });
});
