import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../harness/server.js";

// A root key granted a few resources by id (`identity.<id>.read_identity`) lists exactly
// those resources: never one more (another workspace's, another identity of its own
// workspace), never a short page while more readable rows exist, and a key that may read
// none at all is refused with 403.

const s = useServer();

type Row = { id: string };
const ids = (data: Row[]) => data.map((r) => r.id);

/** A fresh workspace with `n` identities; returns the workspace and the ids, sorted. */
async function identities(n: number): Promise<{ ws: string; all: string[] }> {
  const ws = await s.seed.workspace();
  const all: string[] = [];
  for (let i = 0; i < n; i++) all.push((await s.seed.identity({ workspaceId: ws })).id);
  return { ws, all: all.sort() };
}

/** Every page of listIdentities for `key`, following the cursor. */
async function pages(door: (typeof DOORS)[number], key: string, body: Record<string, unknown>) {
  const out: { ids: string[]; hasMore: boolean }[] = [];
  let cursor: string | undefined;
  do {
    const res = await s.call(
      door,
      "identities.listIdentities",
      { ...body, ...(cursor ? { cursor } : {}) },
      key,
    );
    expect(res.status).toBe(200);
    out.push({ ids: ids(res.data), hasMore: res.pagination?.hasMore ?? false });
    cursor = res.pagination?.cursor;
    expect(out.length).toBeLessThan(20);
  } while (cursor !== undefined);
  return out;
}

describe.each(DOORS)("identities.listIdentities with per-identity grants, via %s", (door) => {
  it("lists exactly the identities the key may read", async () => {
    const { ws, all } = await identities(5);
    const readable = [all[1], all[3]] as string[];
    const key = await s.seed.rootKey(
      readable.map((id) => `identity.${id}.read_identity`),
      ws,
    );
    const res = await s.call(door, "identities.listIdentities", {}, key);
    expect(res.status).toBe(200);
    expect(ids(res.data)).toEqual(readable);
    expect(res.pagination).toEqual({ hasMore: false });
  });

  it("fills every page while readable identities remain, and the cursor visits each once", async () => {
    const { ws, all } = await identities(9);
    // Readable: the 1st, 4th, 5th, 8th and 9th by id, with unreadable ones between them.
    const readable = [0, 3, 4, 7, 8].map((i) => all[i] as string);
    const key = await s.seed.rootKey(
      readable.map((id) => `identity.${id}.read_identity`),
      ws,
    );
    expect(await pages(door, key, { limit: 2 })).toEqual([
      { ids: readable.slice(0, 2), hasMore: true },
      { ids: readable.slice(2, 4), hasMore: true },
      { ids: readable.slice(4), hasMore: false },
    ]);
  });

  it("applies the search to the readable identities only", async () => {
    const ws = await s.seed.workspace();
    const mine = await s.seed.identity({ workspaceId: ws, externalId: "team_a_1" });
    await s.seed.identity({ workspaceId: ws, externalId: "team_a_2" });
    const key = await s.seed.rootKey([`identity.${mine.id}.read_identity`], ws);
    const res = await s.call(door, "identities.listIdentities", { search: "team_a" }, key);
    expect(ids(res.data)).toEqual([mine.id]);
  });

  it("reads wildcard resource and action segments the way every permission check does", async () => {
    const { ws, all } = await identities(3);
    const key = await s.seed.rootKey(
      [`*.${all[0]}.read_identity`, `identity.${all[2]}.*`, "identity.*.update_identity"],
      ws,
    );
    const res = await s.call(door, "identities.listIdentities", {}, key);
    expect(ids(res.data)).toEqual([all[0], all[2]]);
  });

  it("never lists another workspace's or a deleted identity its grants name", async () => {
    const { ws, all } = await identities(2);
    const foreign = await s.seed.identity({ workspaceId: await s.seed.workspace() });
    const key = await s.seed.rootKey(
      [...all, foreign.id].map((id) => `identity.${id}.read_identity`),
      ws,
    );
    const deleter = await s.seed.rootKey(["identity.*.delete_identity"], ws);
    const deleted = await s.call(door, "identities.deleteIdentity", { identity: all[1] }, deleter);
    expect(deleted.status).toBe(200);
    const res = await s.call(door, "identities.listIdentities", {}, key);
    expect(ids(res.data)).toEqual([all[0]]);
  });

  it("refuses a key that may read no identity at all with 403", async () => {
    const { ws } = await identities(1);
    for (const granted of [
      ["identity.*.update_identity"],
      ["api.*.read_api", "rbac.*.read_role"],
    ]) {
      const key = await s.seed.rootKey(granted, ws);
      const res = await s.call(door, "identities.listIdentities", {}, key);
      expect(res.status).toBe(403);
      expect(res.error?.detail).toContain("identity.*.read_identity");
    }
  });

  it("lists every identity for a key with the wildcard grant", async () => {
    const { ws, all } = await identities(3);
    const key = await s.seed.rootKey(["identity.*.read_identity"], ws);
    expect(ids((await s.call(door, "identities.listIdentities", {}, key)).data)).toEqual(all);
  });
});

describe("list procedures scoped to one resource", () => {
  it("apis.listKeys lists an API's keys with grants on that API only, and refuses other APIs", async () => {
    const a = await s.seed.key();
    const b = await s.seed.key();
    const key = await s.seed.rootKey([`api.${a.apiId}.read_key`, `api.${a.apiId}.read_api`]);
    const own = await s.call("json", "apis.listKeys", { apiId: a.apiId }, key);
    expect(own.status).toBe(200);
    expect(ids(own.data.map((k: { keyId: string }) => ({ id: k.keyId })))).toEqual([a.keyId]);
    const other = await s.call("json", "apis.listKeys", { apiId: b.apiId }, key);
    expect(other.status).toBe(403);
    const half = await s.seed.rootKey([`api.${a.apiId}.read_key`]);
    expect((await s.call("json", "apis.listKeys", { apiId: a.apiId }, half)).status).toBe(403);
  });

  it("ratelimit.listOverrides lists a namespace's overrides with a grant on that namespace only", async () => {
    const names = ["narrow.ns.a", "narrow.ns.b"];
    for (const namespace of names) {
      const body = { namespace, identifier: "user_1", limit: 5, duration: 60_000 };
      expect((await s.call("json", "ratelimit.setOverride", body)).status).toBe(404);
      await s.call("json", "ratelimit.limit", { ...body, limit: 1 });
      expect((await s.call("json", "ratelimit.setOverride", body)).status).toBe(200);
    }
    const rows = await s.db.query<{ id: string; name: string }>(
      "select id, name from ratelimit_namespaces where workspace_id = $1 and name = any($2::text[])",
      [s.workspaceId, names],
    );
    const nsA = rows.find((r) => r.name === names[0])?.id;
    const key = await s.seed.rootKey([`ratelimit.${nsA}.read_override`]);
    const own = await s.call("json", "ratelimit.listOverrides", { namespace: names[0] }, key);
    expect(own.status).toBe(200);
    expect(own.data.map((o: { identifier: string }) => o.identifier)).toEqual(["user_1"]);
    const other = await s.call("json", "ratelimit.listOverrides", { namespace: names[1] }, key);
    expect(other.status).toBe(403);
  });

  it("analytics.getVerifications reads the rows of the APIs a key may read analytics of", async () => {
    const a = await s.seed.key();
    const b = await s.seed.key();
    for (const k of [a, a, b]) {
      const body = { key: k.key, apiId: k.apiId };
      expect((await s.call("json", "keys.verifyKey", body, null)).status).toBe(200);
    }
    await s.app.deps.events.flush();
    const key = await s.seed.rootKey([`api.${a.apiId}.read_analytics`]);
    const res = await s.call(
      "json",
      "analytics.getVerifications",
      { query: "select api_id, count(*)::int as n from key_verifications_v1 group by api_id" },
      key,
    );
    expect(res.data).toEqual([{ api_id: a.apiId, n: 2 }]);
    const none = await s.seed.rootKey(["api.*.read_key"]);
    const refused = await s.call("json", "analytics.getVerifications", { query: "select 1" }, none);
    expect(refused.status).toBe(403);
  });
});
