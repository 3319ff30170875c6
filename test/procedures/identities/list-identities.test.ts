import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// identities.listIdentities: one page of the caller's workspace's live identities, by id,
// optionally searched in ids and externalIds, filtered to those a narrower key may read.

const s = useServer();

/** A workspace of its own and a client of it granted `permissions`. */
async function workspaceAs(permissions: string[]) {
  const workspaceId = await s.seed.workspace();
  const api = s.as(await s.seed.rootKey(permissions, workspaceId));
  return { workspaceId, identities: api.identities };
}

describe("identities.listIdentities", () => {
  it("pages through the workspace's identities by id, each exactly once", async () => {
    const w = await workspaceAs(["identity.*.read_identity"]);
    const made = new Set<string>();
    for (let i = 0; i < 250; i++) {
      made.add((await s.seed.identity({ workspaceId: w.workspaceId })).id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await w.identities.listIdentities({ limit: 100, cursor });
      pages++;
      seen.push(...res.data.map((i) => i.id));
      if (!res.pagination?.hasMore) {
        expect(res.pagination?.cursor).toBeUndefined();
        break;
      }
      cursor = res.pagination.cursor;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(250);
    expect(new Set(seen)).toEqual(made);
    expect([...seen].sort()).toEqual(seen);
  });

  it("defaults to 100 per page, leaves out deleted identities and other workspaces", async () => {
    const w = await workspaceAs(["identity.*.*"]);
    const a = await s.seed.identity({ workspaceId: w.workspaceId });
    const b = await s.seed.identity({ workspaceId: w.workspaceId });
    await s.seed.identity();
    await w.identities.deleteIdentity({ identity: b.id });
    const res = await w.identities.listIdentities({});
    expect(res.data.map((i) => i.id)).toEqual([a.id]);
    expect(res.pagination?.hasMore).toBe(false);
    expect(res.pagination?.cursor).toBeUndefined();
  });

  it("searches ids and externalIds case-insensitively, with LIKE characters taken literally", async () => {
    const w = await workspaceAs(["identity.*.read_identity"]);
    const hit = await s.seed.identity({ workspaceId: w.workspaceId, externalId: "Alice_Smith" });
    await s.seed.identity({ workspaceId: w.workspaceId, externalId: "AliceXSmith" });
    const res = await w.identities.listIdentities({ search: "  ice_s " });
    expect(res.data.map((i) => i.id)).toEqual([hit.id]);
  });

  it("answers an empty page for a garbage cursor", async () => {
    const res = await s.api.identities.listIdentities({ cursor: "zzzz" });
    expect(res.data).toEqual([]);
    expect(res.pagination?.hasMore).toBe(false);
  });

  it.each([
    [{ limit: 0 }, "/limit"],
    [{ limit: 101 }, "/limit"],
    [{ search: "x".repeat(257) }, "/search"],
  ])("rejects %j with 400", async (body, location) => {
    const r = await refusal(s.api.identities.listIdentities(body));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe(location);
  });

  it("needs read_identity on some identity, else 403 naming identity.*.read_identity", async () => {
    const updater = s.as(await s.seed.rootKey(["identity.*.update_identity"]));
    const r = await refusal(updater.identities.listIdentities({}));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain("identity.*.read_identity");
    // A grant on one identity lists that identity only (test/security/narrow-lists.test.ts).
    const narrow = s.as(await s.seed.rootKey(["identity.id_x.read_identity"]));
    const listed = await narrow.identities.listIdentities({});
    expect(listed.data).toEqual([]);
    expect(listed.pagination?.hasMore).toBe(false);
  });
});
